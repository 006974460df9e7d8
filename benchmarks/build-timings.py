#!/usr/bin/env python3
"""Summarise a `cargo build --timings` report as Markdown.

    cargo build --timings            # writes target/cargo-timings/cargo-timing.html
    python3 benchmarks/build-timings.py target/cargo-timings/cargo-timing.html

Prints the build's wall time, the units that took longest, and the time
per group of crates (C/C++ build scripts, candle, sqlparser, lucy, ...).
A unit's duration is wall time while other units ran beside it, so the
durations add up to more than the wall time on a machine with several cores;
the CPU graph of the report says whether the cores were busy throughout.
"""

import json
import re
import sys

GROUPS = [
    ("HiGHS (highs-sys build script: C++ via cmake)", {"highs-sys"}),
    ("llama.cpp (llama-cpp-sys-2 build script: C++ via cmake)", {"llama-cpp-sys-2"}),
    ("candle + gemm (MiniLM embeddings)", {"candle-core", "candle-nn", "candle-transformers", "gemm", "gemm-common",
                                           "gemm-f16", "gemm-f32", "gemm-f64", "gemm-c32", "gemm-c64"}),
    ("sqlparser", {"sqlparser", "sqlparser_derive"}),
    ("tokenizers", {"tokenizers"}),
    ("llguidance, derivre, toktrie (grammars)", {"llguidance", "derivre", "toktrie"}),
    ("TLS (rustls, aws-lc-sys, aws-lc-rs)", {"rustls", "aws-lc-sys", "aws-lc-rs"}),
    ("SQLite (libsqlite3-sys, rusqlite)", {"libsqlite3-sys", "rusqlite"}),
    ("bindgen, clang-sys (build scripts)", {"bindgen", "clang-sys"}),
    ("syn 2 and syn 3", {"syn"}),
    ("HTTP and async (tokio, hyper, axum, rmcp, reqwest, h2, tower)", {"tokio", "hyper", "hyper-util", "axum", "axum-core",
                                                                        "rmcp", "rmcp-macros", "reqwest", "h2", "tower",
                                                                        "tower-http"}),
    ("PostgreSQL and MySQL drivers", {"postgres", "tokio-postgres", "postgres-protocol", "postgres-types", "mysql",
                                      "mysql_common"}),
    ("lucy (lib and bin)", {"lucy"}),
]


def main(path: str) -> None:
    html = open(path, encoding="utf-8").read()
    m = re.search(r"const UNIT_DATA = (\[.*?\]);\n", html, re.S)
    if not m:
        sys.exit(f"{path}: no UNIT_DATA (not a cargo --timings report?)")
    units = json.loads(m.group(1))
    wall = max(u["start"] + u["duration"] for u in units)
    cpu = re.search(r"const CPU_USAGE = (\[.*?\]);", html, re.S)
    busy = ""
    if cpu:
        samples = json.loads(cpu.group(1))
        if samples:
            busy = f", cores busy {sum(s[1] for s in samples) / len(samples):.0f} % of the time on average"
    print(f"{len(units)} units, wall {wall:.0f} s ({wall / 60:.1f} min){busy}.\n")
    print("| group | units | sum of unit durations, s |")
    print("|---|---|---|")
    seen = set()
    for name, crates in GROUPS:
        us = [u for u in units if u["name"] in crates]
        seen.update(id(u) for u in us)
        print(f"| {name} | {len(us)} | {sum(u['duration'] for u in us):.0f} |")
    rest = [u for u in units if id(u) not in seen]
    print(f"| everything else | {len(rest)} | {sum(u['duration'] for u in rest):.0f} |")
    print(f"| all | {len(units)} | {sum(u['duration'] for u in units):.0f} |")
    print("\nLongest units:\n")
    print("| unit | start, s | duration, s |")
    print("|---|---|---|")
    for u in sorted(units, key=lambda u: -u["duration"])[:12]:
        what = u["name"] + " " + u["version"] + (" " + u["target"].strip() if u.get("target", "").strip() else "")
        print(f"| {what} | {u['start']:.0f} | {u['duration']:.0f} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
