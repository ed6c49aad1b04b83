"""Secrets kept out of configs and messages. An API key lives in an environment variable, which a
config names (`api_key_env: MY_ENDPOINT_KEY`); it is never written in a config, where it would be
committed, printed and logged, and a value that is a key rather than a variable's name is never
shown back. `looks_secret` says which fields anything that prints a config must leave out."""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

from omegaconf import OmegaConf

from olympiad_eval.core.records import InputError

# A name the environment can hold (POSIX: letters, digits and '_', not starting with a digit).
VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# How known providers' keys and tokens begin (OpenAI, Anthropic's sk-ant-, Hugging Face, GitHub,
# Groq, xAI, Google, GitLab, Stripe-style, JWTs, and an Authorization header's value).
KEY_PREFIXES = (
    "sk-",
    "sk_",
    "rk_",
    "pk_",
    "hf_",
    "ghp_",
    "gho_",
    "ghs_",
    "github_pat_",
    "gsk_",
    "xai-",
    "AIza",
    "glpat-",
    "eyJ",
    "Bearer ",
    "Basic ",
)
# A field whose name says it holds a secret: `api_key`, `apiKey`, `key`, `token`, `secret`,
# `password`, an `Authorization` or `X-Api-Key` header... (`api_key_env` names a variable: allowed).
_SECRET_NAME = re.compile(
    r"(?:^|[_\-.])(?:api[_\-]?key|apikey|key|token|access[_\-]?token|secret|client[_\-]?secret|password|passwd|"
    r"authorization|auth|bearer|credentials?)$",
    re.IGNORECASE,
)
ALLOWED_NAMES = frozenset({"api_key_env", "prompt_cache_key"})  # a variable's name; a cache hint
# A count of tokens, not a token (`max_tokens`, `max_token`, `max_new_tokens`, `min_tokens`, ...).
_TOKEN_COUNT = re.compile(r"(?:^|[_\-.])(?:max|min|num|n|total)[_\-]?(?:new[_\-]?|completion[_\-]?)?tokens?$", re.I)
_LONG_RUN = re.compile(r"[A-Za-z0-9]{32,}")


def secret_name(name) -> bool:
    """Whether a field's name says that it holds a secret."""
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", str(name))  # apiKey -> api_Key
    return str(name) not in ALLOWED_NAMES and not _TOKEN_COUNT.search(text) and _SECRET_NAME.search(text) is not None


def secret_value(value) -> bool:
    """Whether a text looks like a key or token: a known provider's prefix, or a run of 32 letters
    and digits mixed (a hash-like token: no model id, URL or variable name has one)."""
    if not isinstance(value, str):
        return False
    text = value.strip()
    if text.startswith(KEY_PREFIXES) or " Bearer " in text:
        return True
    return any(re.search(r"[0-9]", run) and re.search(r"[A-Za-z]", run) for run in _LONG_RUN.findall(text))


def looks_secret(name, value) -> bool:
    """Whether a config field must never be printed: its name or its value says it is a secret."""
    return secret_name(name) or secret_value(value)


def variable_name(value, key: str = "api_key_env") -> str:
    """`value` as the name of an environment variable; a value that is none (a key pasted in its
    place) is refused with a line that does not show it."""
    text = str(value)
    if VARIABLE.fullmatch(text) and not secret_value(text):
        return text
    what = "looks like an API key itself" if secret_value(text) else "is not a name an environment variable can have"
    raise InputError(
        f"{key} must be the name of the environment variable that holds the key (e.g. MY_ENDPOINT_KEY), and "
        f"what it holds {what} (its {len(text)} characters are not shown): put the key in a variable "
        f"(export MY_ENDPOINT_KEY=...) and set {key}: MY_ENDPOINT_KEY; if that value is a key that reached a "
        "file or a log, revoke it"
    )


def check_no_secrets(cfg, where: str) -> None:
    """A model's or a judge endpoint's config holds no secret: no field named like one (`api_key:`,
    an `Authorization` header under `generation.extra_headers`, ...) and no value that looks like a
    key, at any depth. The line names the field, never the value, and says to use `api_key_env`."""
    for path, name, value in _fields(cfg, ""):
        if secret_name(name):
            said = f"{path}: an API key or other secret is never written in a config"
        elif secret_value(value):
            said = f"{path} holds what looks like an API key (not shown); a secret is never written in a config"
        elif part := url_credentials(value):
            said = (
                f"{path} ({shown_url(value)}) holds {part}, not shown: a key is never written in a URL, where it "
                "is printed with every error and page"
            )
        else:
            continue
        raise InputError(
            f"{where}: {said} (it would be committed, and printed in pages and logs): put it in an environment "
            "variable and name that variable in `api_key_env` (api_key_env: MY_ENDPOINT_KEY); if it reached a "
            "file or a log, revoke it"
        )


def url_credentials(value) -> str | None:
    """What part of an http(s) URL could carry a credential (its user part, its query string), or None."""
    parts = _http_url(value)
    if parts is None:
        return None
    if "@" in parts.netloc:
        return "a user part (user:password@host)"
    return "a query string (?...)" if parts.query else None


def shown_url(value):
    """`value` as it may be printed: an http(s) URL without its user part, query and fragment, where
    credentials would be; anything else as it is."""
    parts = _http_url(value)
    if parts is None:
        return value
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


def _http_url(value):
    """`value` split into its parts where it is an http(s) URL, else None."""
    return urlsplit(value) if isinstance(value, str) and value.startswith(("http://", "https://")) else None


def _fields(value, path: str):
    """(path, name, value) of every field of a config, nested mappings and lists walked."""
    if OmegaConf.is_config(value):
        value = OmegaConf.to_container(value, resolve=False)
    if isinstance(value, Mapping):
        for name, item in value.items():
            where = f"{path}.{name}" if path else str(name)
            yield where, name, item
            yield from _fields(item, where)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            where = f"{path}[{index}]"
            yield where, "", item
            yield from _fields(item, where)
