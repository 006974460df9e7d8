#!/usr/bin/env python3
"""Generate dbmodels/ddo.sqlite: sample data for the paper's DDO model.

The schema (tables, column types, primary and foreign keys) is read from
dbmodels/ddo.json so the database and the model cannot drift apart. The data
is random with a fixed seed, hence deterministic, and shaped so that the
paper's questions have non-trivial answers:

- Q1: some datacenters are named dev-...; clients reach them only through
  RSPOOL2CLIENT -> RESOURCEPOOL -> COMPUTE. Clients mostly live in other
  cities than the datacenters, so the wrong "same LOCATION" join gives a
  different answer than the right m:m join.
- Q2: some resource pools have CCPU.overheadlimit > RCPU.overallusage + 100,
  others do not.
- Q3: every PAYAMOUNT row is exactly one of TAX, SUPERCHARGE, INCOME.

Usage: python3 scripts/gen_ddo_sqlite.py  (from anywhere; prints the answers
of Q1-Q3, which dbmodels/README.md records).
"""

import json
import os
import random
import sqlite3
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "dbmodels", "ddo.json")
OUT = os.path.join(ROOT, "dbmodels", "ddo.sqlite")

Q1_RIGHT = """
SELECT DISTINCT CLIENT.name, DATACENTER.name FROM DATACENTER
JOIN COMPUTE ON DATACENTER.id = COMPUTE.dc_id
JOIN RESOURCEPOOL ON COMPUTE.id = RESOURCEPOOL.compute_id
JOIN RSPOOL2CLIENT ON RESOURCEPOOL.id = RSPOOL2CLIENT.rspool_id
JOIN CLIENT ON CLIENT.id = RSPOOL2CLIENT.client_id
WHERE DATACENTER.name LIKE 'dev%' ORDER BY 1, 2"""

Q1_WRONG = """
SELECT DISTINCT CLIENT.name, DATACENTER.name FROM CLIENT
JOIN LOCATION ON LOCATION.id = CLIENT.loc_id
JOIN DATACENTER ON LOCATION.id = DATACENTER.loc_id
WHERE DATACENTER.name LIKE 'dev%' ORDER BY 1, 2"""

Q2 = """
SELECT DISTINCT RESOURCEPOOL.name FROM RESOURCEPOOL
LEFT JOIN CONFIG ON RESOURCEPOOL.id = CONFIG.rspool_id
LEFT JOIN CCPU ON CONFIG.id = CCPU.config_id
LEFT JOIN RUNTIME ON RESOURCEPOOL.id = RUNTIME.rspool_id
LEFT JOIN RCPU ON RUNTIME.id = RCPU.runtime_id
WHERE CCPU.overheadlimit > RCPU.overallusage + 100 ORDER BY 1"""

Q3 = """
SELECT ROUND(
  (SELECT COALESCE(SUM(PAYAMOUNT.amount), 0) FROM PAYAMOUNT JOIN TAX ON TAX.payamt_id = PAYAMOUNT.id)
+ (SELECT COALESCE(SUM(PAYAMOUNT.amount), 0) FROM PAYAMOUNT JOIN SUPERCHARGE ON SUPERCHARGE.payamt_id = PAYAMOUNT.id), 2)"""


def create_schema(db, model):
    """CREATE TABLE statements from the dbModel, FKs declared."""
    fks = {}
    for r in model["relationships"]:
        fks.setdefault(r["from"], []).append(r)
    for t in model["tables"]:
        cols = []
        for c in t["columns"]:
            null = "" if c.get("nullable", True) else " NOT NULL"
            cols.append(f'"{c["name"]}" {c["type"]}{null}')
        cols.append("PRIMARY KEY (" + ", ".join(t["primary_key"]) + ")")
        for r in fks.get(t["name"], []):
            left = ", ".join(p[0] for p in r["on"])
            right = ", ".join(p[1] for p in r["on"])
            cols.append(f'FOREIGN KEY ({left}) REFERENCES {r["to"]} ({right})')
        db.execute(f'CREATE TABLE {t["name"]} (\n  ' + ",\n  ".join(cols) + "\n)")


def populate(db, rng):
    ins = lambda table, rows: db.executemany(
        f"INSERT INTO {table} VALUES ({','.join('?' * len(rows[0]))})", rows
    )
    # Locations 1-4 host datacenters; clients live mostly in 5-14 and a few
    # in datacenter cities, so the "same location" join is non-empty but wrong.
    cities = [
        ("Palo Alto", "USA", "94301"), ("Dublin", "Ireland", "D02"), ("Frankfurt", "Germany", "60311"),
        ("Singapore", "Singapore", "018956"), ("Austin", "USA", "73301"), ("Toronto", "Canada", "M5H"),
        ("Lyon", "France", "69001"), ("Madrid", "Spain", "28001"), ("Osaka", "Japan", "530-0001"),
        ("Melbourne", "Australia", "3000"), ("Boston", "USA", "02108"), ("Warsaw", "Poland", "00-001"),
        ("Nairobi", "Kenya", "00100"), ("Santiago", "Chile", "8320000"),
    ]
    ins("LOCATION", [(i + 1, c, k, z) for i, (c, k, z) in enumerate(cities)])

    companies = [
        "Acme Analytics", "Blue Harbor Bank", "Cobalt Games", "Delta Freight", "Evergreen Health",
        "Fjord Media", "Granite Insurance", "Helix Biotech", "Iris Retail", "Juniper Labs",
        "Kestrel Airlines", "Lumen Energy", "Maple Logistics", "Nimbus Travel", "Orchid Foods",
        "Pioneer Mining", "Quartz Security", "Riverstone Legal", "Summit Education", "Tidal Telecom",
        "Umbra Studios", "Vertex Robotics", "Willow Pharma", "Xenon Motors", "Yarrow Farms",
        "Zephyr Wind", "Atlas Shipping", "Beacon News", "Cedar Realty", "Dune Outdoor",
    ]
    clients = []
    for i, name in enumerate(companies):
        loc = rng.randint(1, 4) if i % 7 == 0 else rng.randint(5, len(cities))
        clients.append((i + 1, name, rng.choice("FM"), loc))
    ins("CLIENT", clients)

    dcs = [
        (1, "dev-east-1", 1), (2, "prod-east-1", 1), (3, "dev-eu-central", 3), (4, "prod-eu-west", 2),
        (5, "staging-apac", 4), (6, "prod-apac", 4), (7, "dev-apac-2", 4), (8, "prod-eu-central", 3),
    ]
    ins("DATACENTER", dcs)

    computes, cid = [], 0
    for dc in dcs:
        for k in range(2):
            cid += 1
            computes.append((cid, f"{dc[1]}-cl{k + 1:02d}", dc[0]))
    ins("COMPUTE", computes)

    teams = ["web", "batch", "ml", "db", "ci", "cache", "etl", "api"]
    pools = []
    for pid in range(1, 41):
        comp = rng.randint(1, len(computes))
        pools.append((pid, f"rp-{teams[pid % len(teams)]}-{pid:02d}", comp))
    ins("RESOURCEPOOL", pools)

    assign, seen = [], set()
    for pool in pools:
        for _ in range(rng.randint(1, 3)):
            c = rng.randint(1, len(clients))
            if (pool[0], c) not in seen:
                seen.add((pool[0], c))
                assign.append((len(assign) + 1, pool[0], c))
    ins("RSPOOL2CLIENT", assign)

    configs, ccpu, cmem = [], [], []
    runtimes, rcpu, rmem = [], [], []
    for pool in pools:
        # A few pools have no configuration or no runtime snapshot yet.
        if pool[0] % 13 != 0:
            for v in range(1, rng.randint(1, 2) + 1):
                cfg = len(configs) + 1
                configs.append((cfg, pool[0], v))
                ccpu.append((len(ccpu) + 1, cfg, rng.randrange(200, 2001, 50), rng.randrange(500, 4001, 250), rng.choice([1000, 2000, 4000])))
                cmem.append((len(cmem) + 1, cfg, rng.randrange(64, 1025, 64), rng.randrange(1024, 16385, 1024)))
        if pool[0] % 11 != 0:
            rt = len(runtimes) + 1
            runtimes.append((rt, pool[0], rng.choice(["green", "green", "green", "yellow", "red"])))
            use = rng.randrange(100, 2001, 10)
            rcpu.append((len(rcpu) + 1, rt, use, use + rng.randrange(0, 801, 10)))
            rmem.append((len(rmem) + 1, rt, rng.randrange(256, 16385, 128)))
    ins("CONFIG", configs)
    ins("CCPU", ccpu)
    ins("CMEMORY", cmem)
    ins("RUNTIME", runtimes)
    ins("RCPU", rcpu)
    ins("RMEMORY", rmem)

    payments, amounts, tax, sup, inc = [], [], [], [], []
    reasons = ["late payment", "peak-hour usage", "premium support", "data egress"]
    sources = ["compute", "storage", "network", "support contract"]
    for pid in range(1, 61):
        payments.append((pid, rng.randint(1, len(clients)), f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"))
        for _ in range(rng.randint(1, 3)):
            aid = len(amounts) + 1
            kind = rng.choice(["tax", "supercharge", "income", "income"])
            amt = rng.randrange(1000, 500001) / 100 if kind == "income" else rng.randrange(500, 50001) / 100
            amounts.append((aid, pid, amt))
            if kind == "tax":
                tax.append((len(tax) + 1, aid, rng.choice([0.05, 0.1, 0.2])))
            elif kind == "supercharge":
                sup.append((len(sup) + 1, aid, rng.choice(reasons)))
            else:
                inc.append((len(inc) + 1, aid, rng.choice(sources)))
    ins("PAYMENT", payments)
    ins("PAYAMOUNT", amounts)
    ins("TAX", tax)
    ins("SUPERCHARGE", sup)
    ins("INCOME", inc)

    rets, gifts, bonuses = [], [], []
    strategies = ["loyalty discount", "win-back", "upsell", "anniversary"]
    items = ["hoodie", "conference ticket", "coffee mug", "training voucher"]
    for rid in range(1, 21):
        rets.append((rid, rng.randint(1, len(clients)), rng.choice(strategies)))
        shape = rng.randint(0, 2)  # gift, bonus, or both
        if shape in (0, 2):
            gifts.append((len(gifts) + 1, rid, rng.choice(items)))
        if shape in (1, 2):
            bonuses.append((len(bonuses) + 1, rid, float(rng.randrange(50, 1001, 50))))
    ins("RETENTION", rets)
    ins("GIFT", gifts)
    ins("BONUS", bonuses)


def main():
    with open(MODEL, encoding="utf-8") as f:
        model = json.load(f)
    if os.path.exists(OUT):
        os.remove(OUT)
    db = sqlite3.connect(OUT)
    db.execute("PRAGMA foreign_keys = ON")
    create_schema(db, model)
    populate(db, random.Random(20240521))
    db.commit()
    bad = db.execute("PRAGMA foreign_key_check").fetchall()
    if bad:
        sys.exit(f"foreign key violations: {bad[:5]}")
    total = sum(db.execute(f"SELECT COUNT(*) FROM {t['name']}").fetchone()[0] for t in model["tables"])
    print(f"wrote {os.path.relpath(OUT, ROOT)}: {len(model['tables'])} tables, {total} rows")
    right = db.execute(Q1_RIGHT).fetchall()
    wrong = db.execute(Q1_WRONG).fetchall()
    print(f"Q1 (m:m join): {len(right)} rows")
    for r in right:
        print(f"  {r[0]} | {r[1]}")
    print(f"Q1 wrong (same LOCATION): {len(wrong)} rows, {len(set(wrong) & set(right))} shared with the right answer")
    for r in wrong:
        print(f"  {r[0]} | {r[1]}")
    q2 = [r[0] for r in db.execute(Q2).fetchall()]
    print(f"Q2: {len(q2)} of {len(db.execute('SELECT 1 FROM RESOURCEPOOL').fetchall())} pools: {', '.join(q2)}")
    print(f"Q3: {db.execute(Q3).fetchone()[0]}")
    db.execute("VACUUM")
    db.close()


if __name__ == "__main__":
    main()
