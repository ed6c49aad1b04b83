"""Throughput of the generate stage's client against a bare `openai` async loop.

Both send the same number of requests to one local fake server with a fixed latency, at the same
concurrency; each client runs in a fresh process so that its CPU time and peak RSS are its own.
The server runs in this process and counts requests in flight.

    python bench/generate_throughput.py [--requests 1000] [--concurrency 32] [--latency 0.5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from olympiad_eval.cli.fake_server import FakeOpenAI


def messages(index: int) -> list[dict]:
    return [{"role": "user", "content": [{"type": "text", "text": f"Problem {index}: what is {index} + 1?"}]}]


async def ours(base_url: str, requests: int, concurrency: int) -> None:
    from omegaconf import OmegaConf
    from tqdm import tqdm

    from olympiad_eval.llm.cache import RequestCache, request_key
    from olympiad_eval.llm.providers import OpenAIProvider, Request, complete_all
    from olympiad_eval.llm.usage import Tally

    cfg = OmegaConf.create(
        {
            "provider": "openai",
            "base_url": base_url,
            "model": "bench",
            "api_key_env": None,
            "concurrency": concurrency,
            "max_retries": 2,
        }
    )
    settings = {"temperature": 0}
    batch = [
        Request(request_key({"model": "bench"}, messages(i), settings, 0), messages(i), settings)
        for i in range(requests)
    ]
    with tempfile.TemporaryDirectory() as folder, open(os.devnull, "w") as sink:
        cache = RequestCache(Path(folder) / "cache.sqlite")
        with tqdm(total=requests, file=sink) as progress:
            replies = await complete_all(OpenAIProvider(cfg, "model 'bench'"), cache, batch, progress, Tally())
        assert len(cache) == requests and all(reply.error is None for reply in replies)
        cache.close()


async def bare(base_url: str, requests: int, concurrency: int) -> None:
    import openai

    client = openai.AsyncOpenAI(base_url=base_url, api_key="not-needed", max_retries=2)
    limit = asyncio.Semaphore(concurrency)

    async def one(index: int) -> str:
        async with limit:
            result = await client.chat.completions.create(model="bench", messages=messages(index), temperature=0)
        return result.choices[0].message.content

    replies = await asyncio.gather(*(one(i) for i in range(requests)))
    assert len(replies) == requests
    await client.close()


def client_main(kind: str, base_url: str, requests: int, concurrency: int) -> None:
    start = time.perf_counter()
    asyncio.run({"ours": ours, "bare": bare}[kind](base_url, requests, concurrency))
    wall = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024}))


def measure(kind: str, server: FakeOpenAI, requests: int, concurrency: int) -> dict:
    server.peak_in_flight = 0
    before = server.count()
    output = subprocess.run(
        [
            sys.executable,
            __file__,
            "--client",
            kind,
            "--base-url",
            server.base_url,
            "--requests",
            str(requests),
            "--concurrency",
            str(concurrency),
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result = json.loads(output.strip().splitlines()[-1])
    assert server.count() - before == requests
    return {**result, "peak_in_flight": server.peak_in_flight}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--client", choices=["ours", "bare"], help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        return client_main(args.client, args.base_url, args.requests, args.concurrency)

    ideal = args.requests / args.concurrency * args.latency
    with FakeOpenAI(latency=args.latency) as server:
        results = {kind: measure(kind, server, args.requests, args.concurrency) for kind in ("ours", "bare")}
    print(
        f"{args.requests} requests, concurrency {args.concurrency}, latency {args.latency} s, "
        f"ideal {ideal:.2f} s (requests / concurrency x latency)"
    )
    print(f"{'client':<22}{'wall s':>9}{'ideal/wall':>12}{'peak in flight':>16}{'CPU ms/req':>12}{'peak RSS MB':>13}")
    for kind, label in (("ours", "generate stage client"), ("bare", "bare openai loop")):
        r = results[kind]
        print(
            f"{label:<22}{r['wall']:>9.2f}{ideal / r['wall']:>12.1%}{r['peak_in_flight']:>16}"
            f"{1000 * r['cpu'] / args.requests:>12.2f}{r['rss_mb']:>13.1f}"
        )
    ours_, bare_ = results["ours"], results["bare"]
    print(
        f"wall ours / bare: {ours_['wall'] / bare_['wall']:.3f} (target <= 1.05); "
        f"CPU ours / bare: {ours_['cpu'] / bare_['cpu']:.3f} (target <= 1.5); "
        f"ideal / wall ours: {ideal / ours_['wall']:.1%} (target >= 90%)"
    )


if __name__ == "__main__":
    main()
