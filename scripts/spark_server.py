#!/usr/bin/env python3
"""A local Spark Connect server owned by the project (run by scripts/db.sh).

    spark_server.py DIR PORT        (with the venv's python: scripts/spark-venv.sh)

One local Spark driver (master local[2], no web UI, bound to 127.0.0.1)
with the Spark Connect plugin listening on 127.0.0.1:PORT. Spark Connect
sessions share the driver's catalog, so the tables this process registers
are the ones clients see. Memory: the driver JVM's heap is
LUCY_SPARK_MEMORY (default 1g).

Data: DIR/warehouse/DB/TABLE holds one Parquet table, DIR/warehouse/DB/
tables.json the database's tables in order. At start every database found
there is registered (CREATE DATABASE, CREATE TABLE ... USING parquet
LOCATION): the catalog itself is in memory, the Parquet files persist.

Loading: `db.sh load SUITE spark` drops DIR/requests/NAME.req (a JSON
{"name", "sqlite"}); this process converts the SQLite file into Parquet
(types as scripts/db_load.py chooses them for PostgreSQL), registers the
tables, and answers with NAME.done or NAME.err. Notes go to stderr prefixed
"lucy-load: ".

Authentication: clients must send the bearer token LUCY_SPARK_SERVER_TOKEN
(Spark's spark.connect.authenticate.token).
"""
import datetime
import decimal
import io
import json
import os
import re
import shutil
import signal
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import db_load  # noqa: E402  (same directory)

from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import types as T  # noqa: E402


def q(name):
    return "`" + name.replace("`", "``") + "`"


def spark_type(pg):
    """The Spark type for the PostgreSQL type db_load.target_type chose."""
    u = pg.upper()
    if u in ("INTEGER", "BIGINT"):
        return T.LongType()
    if u == "DOUBLE PRECISION":
        return T.DoubleType()
    m = re.match(r"NUMERIC\((\d+),(\d+)\)", u)
    if m:
        return T.DecimalType(int(m.group(1)), int(m.group(2)))
    if u == "DATE":
        return T.DateType()
    if u == "TIMESTAMP":
        return T.TimestampNTZType()
    if u == "BYTEA":
        return T.BinaryType()
    return T.StringType()


def convert(v, ty):
    if v is None:
        return None
    if isinstance(ty, T.LongType):
        return int(v)
    if isinstance(ty, T.DoubleType):
        return float(v)
    if isinstance(ty, T.DecimalType):
        return decimal.Decimal(repr(v) if isinstance(v, float) else v)
    if isinstance(ty, T.DateType):
        return datetime.date.fromisoformat(v)
    if isinstance(ty, T.TimestampNTZType):
        return datetime.datetime.fromisoformat(v.replace("T", " "))
    if isinstance(ty, T.BinaryType):
        return bytearray(v)
    return str(v)


def register(spark, wh, db):
    tables = json.load(open(os.path.join(wh, db, "tables.json")))
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {q(db)}")
    for t in tables:
        spark.sql(f"DROP TABLE IF EXISTS {q(db)}.{q(t)}")
        loc = os.path.join(wh, db, "t_" + t).replace("'", "\\'")
        spark.sql(f"CREATE TABLE {q(db)}.{q(t)} USING parquet LOCATION '{loc}'")


def load(spark, wh, name, path):
    tables = db_load.read(path)
    fks = db_load.resolve_fk_targets(tables)
    keyed = db_load.keyed_columns(tables, fks)
    tmp = os.path.join(wh, name + ".loading")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    names = []
    for (t, cols, rows, _pk, _uniques, _) in tables:
        fields = []
        for c in cols:
            pg = db_load.target_type(c, "postgres", (t, c.name) in keyed, f"{t}.{c.name}")
            ty = spark_type(pg)
            vals = [v for v in c.values if v is not None]
            if isinstance(ty, T.TimestampNTZType) and vals and all(db_load.ISO_DATE.match(v) for v in vals):
                # A DATETIME column holding dates only: a DATE prints as SQLite stored it.
                ty = T.DateType()
            fields.append(T.StructField(c.name, ty, True))
        schema = T.StructType(fields)
        data = [tuple(convert(v, f.dataType) for v, f in zip(r, fields)) for r in rows]
        df = spark.createDataFrame(data, schema) if data else spark.createDataFrame([], schema)
        df.coalesce(1).write.mode("overwrite").parquet(os.path.join(tmp, "t_" + t))
        names.append(t)
    json.dump(names, open(os.path.join(tmp, "tables.json"), "w"))
    final = os.path.join(wh, name)
    old = final + ".old"
    shutil.rmtree(old, ignore_errors=True)
    if os.path.exists(final):
        os.rename(final, old)
    os.rename(tmp, final)
    register(spark, wh, name)
    shutil.rmtree(old, ignore_errors=True)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    base, port = sys.argv[1], int(sys.argv[2])
    wh = os.path.join(base, "warehouse")
    req = os.path.join(base, "requests")
    os.makedirs(wh, exist_ok=True)
    os.makedirs(req, exist_ok=True)
    token = os.environ.get("LUCY_SPARK_SERVER_TOKEN", "")
    b = (
        SparkSession.builder.master("local[2]")
        .appName("lucy-spark-connect")
        .config("spark.driver.memory", os.environ.get("LUCY_SPARK_MEMORY", "1g"))
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.catalogImplementation", "in-memory")
        .config("spark.sql.warehouse.dir", os.path.join(base, "spark-warehouse"))
        .config("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin")
        .config("spark.connect.grpc.binding.address", "127.0.0.1")
        .config("spark.connect.grpc.binding.port", str(port))
    )
    if token:
        b = b.config("spark.connect.authenticate.token", token)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    for db in sorted(os.listdir(wh)):
        if os.path.exists(os.path.join(wh, db, "tables.json")) and "." not in db:
            register(spark, wh, db)
    open(os.path.join(base, "ready"), "w").write(f"{port}\n")
    print(f"lucy-spark: ready on 127.0.0.1:{port}", file=sys.stderr, flush=True)
    notes_to = sys.stderr
    while not stop:
        if spark.sparkContext._jsc.sc().isStopped():
            # e.g. after an OutOfMemoryError: the server would only answer errors.
            print("lucy-spark: the SparkContext stopped; exiting", file=sys.stderr, flush=True)
            os.remove(os.path.join(base, "ready"))
            sys.exit(1)
        for f in sorted(os.listdir(req)):
            if not f.endswith(".req"):
                continue
            stem = os.path.join(req, f[:-4])
            try:
                r = json.load(open(stem + ".req"))
                os.remove(stem + ".req")
                notes = io.StringIO()
                sys.stderr = notes
                try:
                    load(spark, wh, r["name"], r["sqlite"])
                finally:
                    sys.stderr = notes_to
                open(stem + ".done", "w").write(notes.getvalue())
            except Exception:  # noqa: BLE001  (any failure is reported to the waiting db.sh)
                open(stem + ".err", "w").write(traceback.format_exc())
        time.sleep(0.3)
    try:
        os.remove(os.path.join(base, "ready"))
    except OSError:
        pass
    spark.stop()


if __name__ == "__main__":
    main()
