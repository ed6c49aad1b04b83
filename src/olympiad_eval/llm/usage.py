"""A batch's usage: requests, retries, tokens and cost, and when its replies were received.

A reply that sent no usage, or figures that are no token counts (`cache.checked_usage`), has tokens
and a cost that are unknown: never zero. Its batch's cost is then unknown (`cost_usd: null`, said
"unknown" in the tables and logs), with the cost of the replies whose usage is known beside it
(`cost_usd_known`) and how many are unknown (`usage_unknown`). Replies that another model served
than the one asked (`cache.same_model`) are counted (`other_model`, by served model in
`served_models`), and so are replies whose figures disagree with one another (`usage_mismatched`, the
first in `usage_mismatch`: reasoning tokens beyond the completion's, a total that is not the sum),
kept as given. Each of these keys is written only where it has something to say, so that the usage
files of every batch without such replies keep their bytes. A request's usage is what all its
attempts were billed: replies refused (`strict_model`) or without an answer count in its tokens and
cost, though they are failures.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from olympiad_eval.llm.cache import Reply, same_model

TOKENS = ("prompt_tokens", "completion_tokens", "reasoning_tokens")


@dataclass
class Tally:
    """Running totals of a batch of requests, for the progress bar and the metrics."""

    prices: dict = field(default_factory=dict)  # USD per million tokens: input, output
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    sent: int = 0
    unknown: int = 0  # answered replies of an endpoint that sends whose usage is unknown
    # This run's requests apart from the replies the request cache held: a rerun whose replies are
    # all cached spends nothing, whatever they were once worth.
    retries: int = 0  # of the requests sent in this run
    spent_usd: float = 0.0  # the requests sent in this run (those whose usage is known)
    spent_unknown: int = 0  # of them, replies whose usage is unknown
    cached: int = 0
    cached_usd: float = 0.0  # what the cached replies cost when they were sent
    cached_unknown: int = 0

    def add(self, reply: Reply, sends: bool = False) -> None:
        self.prompt_tokens += reply.usage.get("prompt_tokens", 0)
        self.completion_tokens += reply.usage.get("completion_tokens", 0)
        self.reasoning_tokens += reply.usage.get("reasoning_tokens", 0)
        unknown = int(sends and reply.error is None and not reply.usage)
        self.unknown += unknown
        cost = self.price(reply.usage.get("prompt_tokens", 0), reply.usage.get("completion_tokens", 0))
        if reply.cached:
            self.cached += 1
            self.cached_usd += cost
            self.cached_unknown += unknown
        else:
            self.sent += 1
            self.spent_usd += cost
            self.spent_unknown += unknown
            self.retries += max(reply.attempts - 1, 0)

    def price(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (
            prompt_tokens * float(self.prices.get("input", 0)) + completion_tokens * float(self.prices.get("output", 0))
        ) / 1e6

    @property
    def cost(self) -> float:
        return self.price(self.prompt_tokens, self.completion_tokens)

    def cost_text(self) -> str:
        """`$0.0123`, or with replies whose usage is unknown `$0.0123 + 3 unknown`."""
        return f"${self.cost:.4f}" + (f" + {self.unknown} unknown" if self.unknown else "")


def usage_totals(replies: list[Reply], prices: dict, sends: bool = False, model: str | None = None) -> dict:
    """A cell's totals (its usage metrics), from the replies as stored: the same on every rerun.
    Tokens and cost are those of the replies that answered; `prices` in USD per million tokens.
    Where the provider `sends`, `replies_received` holds the first and last dates its replies were
    received (None where none has one: all failed, or cached before dates were kept), and replies
    without a usage make the cost unknown; an offline provider's totals have neither, so that their
    bytes are those they had before. `model`: the model asked, against which each reply's served
    model is told apart."""
    answered = [reply for reply in replies if reply.error is None]
    tokens = {name: sum(reply.usage.get(name, 0) for reply in replies) for name in TOKENS}  # failures billed too
    cost = round(Tally(prices=prices, **tokens).cost, 6)
    dates = {"replies_received": received_span([reply.received for reply in answered])} if sends else {}
    unknown = [reply for reply in answered if not reply.usage] if sends else []
    invalid = [reply.usage_problem for reply in unknown if reply.usage_problem]
    mismatched = [reply.usage_mismatch for reply in replies if reply.usage_mismatch]
    other = Counter(
        reply.served_model for reply in answered if model is not None and not same_model(model, reply.served_model)
    )
    return {
        **dates,
        "requests": len(replies),
        "answered": len(answered),
        "failed": len(replies) - len(answered),
        "truncated": sum(reply.finish_reason == "length" for reply in answered),
        "retries": sum(max(reply.attempts - 1, 0) for reply in answered),
        **tokens,
        "cost_usd": None if unknown else cost,
        **({"cost_usd_known": cost, "usage_unknown": len(unknown)} if unknown else {}),
        **({"usage_invalid": len(invalid), "usage_problem": invalid[0]} if invalid else {}),
        **({"usage_mismatched": len(mismatched), "usage_mismatch": mismatched[0]} if mismatched else {}),
        **({"other_model": sum(other.values()), "served_models": dict(sorted(other.items()))} if other else {}),
    }


def merged_usage(usages: list[dict]) -> dict:
    """The usage of several batches as one (an ensemble's judges, each costed at its own prices):
    counts and tokens summed, the cost unknown where any batch's is, the dates' span over all."""
    total = usage_totals([], {})
    for usage in usages:
        for name in total:
            if name != "cost_usd":
                total[name] += usage.get(name, 0)
    unknown = sum(usage.get("usage_unknown", 0) for usage in usages)
    known = round(sum(usage.get("cost_usd_known", usage.get("cost_usd") or 0) for usage in usages), 6)
    total["cost_usd"] = None if unknown else known
    if unknown:
        total.update(cost_usd_known=known, usage_unknown=unknown)
    problems = [usage["usage_problem"] for usage in usages if usage.get("usage_problem")]
    if problems:
        total.update(usage_invalid=sum(usage.get("usage_invalid", 0) for usage in usages), usage_problem=problems[0])
    mismatches = [usage["usage_mismatch"] for usage in usages if usage.get("usage_mismatch")]
    if mismatches:
        total.update(
            usage_mismatched=sum(usage.get("usage_mismatched", 0) for usage in usages), usage_mismatch=mismatches[0]
        )
    served = Counter()
    for usage in usages:
        served.update(usage.get("served_models", {}))
    if served:
        total.update(other_model=sum(served.values()), served_models=dict(sorted(served.items())))
    dated = [usage["replies_received"] for usage in usages if "replies_received" in usage]
    if dated:
        total["replies_received"] = received_span([span[end] for span in dated if span for end in ("first", "last")])
    return total


def this_run(tallies: list[Tally]) -> str:
    """What a batch's requests did in this run (one tally, or an ensemble's, one a judge): sent, retried
    and paid for now, and apart from them the replies the request cache held, with what they cost
    when they were sent; so that a rerun whose replies are all cached never reads as money spent."""
    total = {name: sum(getattr(tally, name) for tally in tallies) for name in vars(Tally()) if name != "prices"}
    said = (
        f"{total['sent']} requests sent ({total['retries']} retries), cost of this run "
        f"{_cost_text(total['spent_usd'], total['spent_unknown'])}"
    )
    if total["cached"]:
        worth = _cost_text(total["cached_usd"], total["cached_unknown"])
        said += f"; {total['cached']} replies from the request cache, worth {worth} when sent (not paid again)"
    return said


def _cost_text(cost: float, unknown: int) -> str:
    """`$0.0123`, or where replies came without a usage `unknown` with what is known."""
    if not unknown:
        return f"${cost:.4f}"
    without = f"{unknown} replies without a usage the endpoint reported as token counts"
    return f"unknown ({without}; ${cost:.4f} for the others)"


def usage_warnings(usage: dict, who: str, model: str | None = None) -> list[str]:
    """What a batch's usage says that a reader of its log must see: replies whose usage is unknown
    (and why, where the figures were wrong), and replies that another model served."""
    said = []
    if usage.get("usage_unknown"):
        why = (
            f"; {usage['usage_invalid']} reported figures that are no token counts "
            f"(the first: {usage['usage_problem']})"
            if usage.get("usage_invalid")
            else ""
        )
        said.append(
            f"{who}: {usage['usage_unknown']} of {usage['answered']} replies came without a usable usage{why}: "
            "their tokens and cost are unknown, and so is the total "
            f"(cost_usd: null; the others' ${usage['cost_usd_known']:.4f})"
        )
    if usage.get("usage_mismatched"):
        said.append(
            f"{who}: {usage['usage_mismatched']} of {usage['requests']} replies reported usage whose parts disagree "
            f"(the first: {usage['usage_mismatch']}): their figures are kept as given and flagged "
            "(usage_mismatched in the usage file, a column in the tables); ask the endpoint's operator which is right"
        )
    if usage.get("other_model"):
        served = ", ".join(f"'{name}' {count}x" for name, count in usage["served_models"].items())
        said.append(
            f"{who}: {usage['other_model']} of {usage['answered']} replies were served by another model than "
            f"{repr(model) if model else 'the one asked'} ({served}): each is recorded with the model that "
            "served it (served_model); set strict_model: true in the config to refuse them"
        )
    return said


def most_common(reasons, shown: int = 3) -> str:
    """The most frequent reasons (of a cell's failed requests or judgments), with their counts."""
    return "; ".join(f"{reason} ({count}x)" for reason, count in Counter(reasons).most_common(shown))


def received_span(dates: list[str | None]) -> dict | None:
    """{first, last} of the dates that are known (ISO 8601 in UTC sorts as time does), or None."""
    known = sorted(date for date in dates if date)
    return {"first": known[0], "last": known[-1]} if known else None
