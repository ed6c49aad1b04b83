"""A batch's usage: requests, retries, tokens and cost, and when its replies were received."""

from __future__ import annotations

from dataclasses import dataclass, field

from olympiad_eval.llm.cache import Reply


@dataclass
class Tally:
    """Running totals of a batch of requests, for the progress bar and the metrics."""

    prices: dict = field(default_factory=dict)  # USD per million tokens: input, output
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    sent: int = 0

    def add(self, reply: Reply) -> None:
        self.prompt_tokens += reply.usage.get("prompt_tokens", 0)
        self.completion_tokens += reply.usage.get("completion_tokens", 0)
        self.reasoning_tokens += reply.usage.get("reasoning_tokens", 0)
        self.sent += 0 if reply.cached else 1

    @property
    def cost(self) -> float:
        return (
            self.prompt_tokens * float(self.prices.get("input", 0))
            + self.completion_tokens * float(self.prices.get("output", 0))
        ) / 1e6


def usage_totals(replies: list[Reply], prices: dict, sends: bool = False) -> dict:
    """A cell's totals (its usage metrics), from the replies as stored: the same on every rerun.
    Tokens and cost are those of the replies that answered; `prices` in USD per million tokens.
    Where the provider `sends`, `replies_received` holds the first and last dates its replies were
    received (None where none has one: all failed, or cached before dates were kept); an offline
    provider's totals have no such key, so that their bytes are those they had before dates."""
    answered = [reply for reply in replies if reply.error is None]
    tokens = {
        name: sum(reply.usage.get(name, 0) for reply in answered)
        for name in ("prompt_tokens", "completion_tokens", "reasoning_tokens")
    }
    cost = Tally(prices=prices, **tokens).cost
    dates = {"replies_received": received_span([reply.received for reply in answered])} if sends else {}
    return {
        **dates,
        "requests": len(replies),
        "answered": len(answered),
        "failed": len(replies) - len(answered),
        "truncated": sum(reply.finish_reason == "length" for reply in answered),
        "retries": sum(max(reply.attempts - 1, 0) for reply in answered),
        **tokens,
        "cost_usd": round(cost, 6),
    }


def received_span(dates: list[str | None]) -> dict | None:
    """{first, last} of the dates that are known (ISO 8601 in UTC sorts as time does), or None."""
    known = sorted(date for date in dates if date)
    return {"first": known[0], "last": known[-1]} if known else None
