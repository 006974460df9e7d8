#!/usr/bin/env python3
"""Translate a SQLite database into a PostgreSQL or MariaDB/MySQL load script.

    db_load.py postgres SQLITE_FILE DB_NAME   > load.sql   (run with psql)
    db_load.py mysql    SQLITE_FILE DB_NAME   > load.sql   (run with mariadb --force)
    db_load.py mysql-errors LOAD.sql STDERR                (name the statements that failed)

Used by scripts/db.sh load. Names keep their catalog spelling (quoted), so an
import from the server equals the SQLite import. Types are kept where the
data fits them; a declared type the stored values do not fit (SQLite does
not enforce types) falls back to text, with a note. Keys and foreign keys
(composite too) are declared after the data is in; a foreign key whose rows
do not all match is still declared (PostgreSQL: NOT VALID; MySQL: with
foreign_key_checks off), with a note. Notes go to stderr prefixed
"lucy-load: " (PostgreSQL: as WARNINGs from the server).
"""
import re
import sqlite3
import sys

PG_INT_MAX = 2**31 - 1


def note(msg):
    sys.stderr.write(f"lucy-load: {msg}\n")


def qpg(name):
    return '"' + name.replace('"', '""') + '"'


def qmy(name):
    return "`" + name.replace("`", "``") + "`"


ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
ISO_TS = re.compile(r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?$")


class Column:
    def __init__(self, name, decl, notnull, values):
        self.name = name
        self.decl = (decl or "").strip()
        self.notnull = bool(notnull)
        self.kinds = {type(v).__name__ for v in values if v is not None}
        self.values = values


def affinity(decl):
    """SQLite's type affinity rules (datatype3.html section 3.1)."""
    d = decl.upper()
    if "INT" in d:
        return "INTEGER"
    if any(k in d for k in ("CHAR", "CLOB", "TEXT")):
        return "TEXT"
    if "BLOB" in d or d == "":
        return "BLOB"
    if any(k in d for k in ("REAL", "FLOA", "DOUB")):
        return "REAL"
    return "NUMERIC"


def args(decl):
    m = re.search(r"\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)", decl)
    if not m:
        return None, None
    return int(m.group(1)), (int(m.group(2)) if m.group(2) else None)


def target_type(col, engine, keyed, where):
    """The server type for a column, from its declared type and its values."""
    d = col.decl.upper()
    aff = affinity(d)
    vals = [v for v in col.values if v is not None]
    kinds = col.kinds
    n, s = args(d)

    def text_type(reason=None):
        if reason:
            note(f"{where}: declared {col.decl or '(no type)'} but {reason}; loaded as text")
        longest = max((len(str(v)) for v in vals), default=0)
        if n is not None and longest <= n and "CHAR" in d:
            # CHAR(n) pads with blanks on both servers; VARCHAR(n) keeps the values as stored.
            return f"VARCHAR({n})"
        if engine == "mysql" and keyed:
            return f"VARCHAR({max(longest, 191)})"
        return "TEXT"

    if kinds & {"bytes"}:
        if kinds == {"bytes"}:
            return "BYTEA" if engine == "postgres" else "LONGBLOB"
        return text_type("it holds blobs beside other values")
    if aff == "TEXT" or (aff == "BLOB" and kinds <= {"str"}):
        return text_type()
    if aff == "INTEGER" or (aff == "BLOB" and kinds == {"int"}):
        if kinds <= {"int"}:
            big = any(abs(v) > PG_INT_MAX for v in vals)
            if "BIG" in d or big:
                return "BIGINT"
            if engine == "postgres" and ("SMALL" in d or "TINY" in d):
                return "INTEGER"
            return "INTEGER" if engine == "postgres" else ("BIGINT" if big else "INT")
        if kinds <= {"int", "float"}:
            note(f"{where}: declared {col.decl} but holds non-integer numbers; loaded as double precision")
            return "DOUBLE PRECISION" if engine == "postgres" else "DOUBLE"
        return text_type("it holds text values")
    if aff == "REAL" or (aff == "BLOB" and kinds <= {"int", "float"}):
        if kinds <= {"int", "float"}:
            return "DOUBLE PRECISION" if engine == "postgres" else "DOUBLE"
        return text_type("it holds text values")
    # NUMERIC affinity: DECIMAL(p,s), NUMERIC, DATE, DATETIME, TIMESTAMP, BOOLEAN, ...
    if "DATE" in d or "TIME" in d:
        if kinds <= {"str"}:
            if all(ISO_DATE.match(v) for v in vals) and "TIME" not in d:
                return "DATE"
            if all(ISO_DATE.match(v) or ISO_TS.match(v) for v in vals):
                frac = any("." in v for v in vals)
                if engine == "postgres":
                    return "TIMESTAMP"
                return "DATETIME(6)" if frac else "DATETIME"
            return text_type("some values are not ISO dates")
        if kinds <= {"int"}:
            # e.g. Spider's wta_1 birth_date 19680831: keep the numbers.
            note(f"{where}: declared {col.decl} but holds integers (like 19680831); loaded as an integer")
            return "BIGINT"
        return text_type("it holds non-text values")
    if kinds <= {"int"} and ("BOOL" in d or not vals or s in (None, 0)) and "DEC" not in d and "NUM" not in d:
        return "INTEGER" if engine == "postgres" else "BIGINT"
    if kinds <= {"int", "float"}:
        if n is not None:
            scale = s or 0
            ok = all(abs(v) < 10 ** (n - scale) and round(v, scale) == v for v in vals)
            if ok:
                return f"NUMERIC({n},{scale})" if engine == "postgres" else f"DECIMAL({n},{scale})"
            note(f"{where}: declared {col.decl} but values do not fit it exactly; loaded as double precision")
        return "DOUBLE PRECISION" if engine == "postgres" else "DOUBLE"
    return text_type("it holds text values")


def pg_copy_value(v):
    if v is None:
        return "\\N"
    if isinstance(v, bytes):
        return "\\\\x" + v.hex()
    if isinstance(v, float):
        return repr(v)
    s = str(v)
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def my_value(v):
    if v is None:
        return "NULL"
    if isinstance(v, bytes):
        return "X'" + v.hex() + "'" if v else "''"
    if isinstance(v, (int, float)):
        return repr(v)
    s = str(v).replace("\\", "\\\\").replace("'", "\\'").replace("\0", "\\0").replace("\n", "\\n").replace("\r", "\\r")
    return "'" + s + "'"


def read(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    con.text_factory = lambda b: b.decode("utf-8", errors="replace")
    tables = [r[0] for r in con.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid")]
    out = []
    for t in tables:
        info = con.execute(f"PRAGMA table_info({qpg(t)})").fetchall()
        rows = con.execute(f"SELECT * FROM {qpg(t)}").fetchall()
        cols = [Column(c[1], c[2], c[3], [r[i] for r in rows]) for i, c in enumerate(info)]
        pk = [c[1] for c in sorted((c for c in info if c[5] > 0), key=lambda c: c[5])]
        uniques = []
        for idx in con.execute(f"PRAGMA index_list({qpg(t)})").fetchall():
            # (seq, name, unique, origin, partial); origin 'u' = UNIQUE constraint, 'c' = CREATE UNIQUE INDEX
            if idx[2] and idx[3] in ("u", "c") and not idx[4]:
                icols = [r[2] for r in con.execute(f"PRAGMA index_info({qpg(idx[1])})").fetchall()]
                if icols and None not in icols and icols != pk:
                    uniques.append(icols)
        fks = {}
        for r in con.execute(f"PRAGMA foreign_key_list({qpg(t)})").fetchall():
            # (id, seq, table, from, to, ...)
            fks.setdefault(r[0], []).append(r)
        fk_list = []
        for _, parts in sorted(fks.items()):
            parts.sort(key=lambda r: r[1])
            fk_list.append((parts[0][2], [p[3] for p in parts], [p[4] for p in parts]))
        out.append((t, cols, rows, pk, uniques, fk_list))
    return out


def resolve_fk_targets(tables):
    """SQLite allows `REFERENCES T` without columns (the parent's key) and
    names that differ in case; resolve both to the parent's spelling."""
    by_lower = {t[0].lower(): t for t in tables}
    result = {}
    for (t, cols, rows, pk, uniques, fks) in tables:
        out = []
        for parent, frm, to in fks:
            p = by_lower.get(parent.lower())
            if p is None:
                note(f"{t}: foreign key ({', '.join(frm)}) references missing table {parent}; skipped")
                continue
            pcols = {c.name.lower(): c.name for c in p[1]}
            if any(x is None for x in to):
                to = p[3]
            if len(to) != len(frm) or any(x.lower() not in pcols for x in to):
                note(f"{t}: foreign key ({', '.join(frm)}) references {parent}({', '.join(map(str, to))}), not columns of it; skipped")
                continue
            tcols = {c.name.lower(): c.name for c in cols}
            if any(x.lower() not in tcols for x in frm):
                note(f"{t}: foreign key names unknown columns ({', '.join(frm)}); skipped")
                continue
            out.append((p[0], [tcols[x.lower()] for x in frm], [pcols[x.lower()] for x in to]))
        result[t] = out
    return result


def keyed_columns(tables, fks):
    keyed = set()
    for (t, cols, rows, pk, uniques, _) in tables:
        for c in pk:
            keyed.add((t, c))
        for u in uniques:
            for c in u:
                keyed.add((t, c))
        for parent, frm, to in fks[t]:
            for c in frm:
                keyed.add((t, c))
            for c in to:
                keyed.add((parent, c))
    return keyed


def emit_postgres(tables, db):
    fks = resolve_fk_targets(tables)
    keyed = keyed_columns(tables, fks)
    w = sys.stdout.write
    w(f"-- generated by scripts/db_load.py for database {db}\nSET client_min_messages = warning;\n")
    types = {}
    for (t, cols, rows, pk, uniques, _) in tables:
        defs = []
        for c in cols:
            ty = target_type(c, "postgres", (t, c.name) in keyed, f"{t}.{c.name}")
            types[(t, c.name)] = ty
            defs.append(f"  {qpg(c.name)} {ty}" + (" NOT NULL" if c.notnull else ""))
        w(f"CREATE TABLE {qpg(t)} (\n" + ",\n".join(defs) + "\n);\n")
    for (t, cols, rows, pk, uniques, _) in tables:
        w(f"COPY {qpg(t)} ({', '.join(qpg(c.name) for c in cols)}) FROM STDIN;\n")
        for r in rows:
            w("\t".join(pg_copy_value(v) for v in r) + "\n")
        w("\\.\n")
    # Constraints one by one, each in its own block so a failure is named and
    # the rest still load.
    def guarded(desc, stmt, fallback=None):
        fb = f"BEGIN {fallback}; RAISE WARNING 'lucy-load: % (%); declared NOT VALID', {lit(desc)}, SQLERRM; " \
             f"EXCEPTION WHEN others THEN RAISE WARNING 'lucy-load: % not declared: %', {lit(desc)}, SQLERRM; END;" \
            if fallback else f"RAISE WARNING 'lucy-load: % not declared: %', {lit(desc)}, SQLERRM;"
        w(f"DO $lucy$ BEGIN {stmt}; EXCEPTION WHEN others THEN {fb} END $lucy$;\n")

    for (t, cols, rows, pk, uniques, _) in tables:
        if pk:
            guarded(f"{t}: primary key ({', '.join(pk)})",
                    f"ALTER TABLE {qpg(t)} ADD PRIMARY KEY ({', '.join(qpg(c) for c in pk)})")
        for u in uniques:
            guarded(f"{t}: unique ({', '.join(u)})",
                    f"ALTER TABLE {qpg(t)} ADD UNIQUE ({', '.join(qpg(c) for c in u)})")
    for (t, cols, rows, pk, uniques, _) in tables:
        for i, (parent, frm, to) in enumerate(fks[t]):
            add = (f"ALTER TABLE {qpg(t)} ADD CONSTRAINT {qpg(fk_name(t, i))} FOREIGN KEY ({', '.join(qpg(c) for c in frm)}) "
                   f"REFERENCES {qpg(parent)} ({', '.join(qpg(c) for c in to)})")
            guarded(f"{t}: foreign key ({', '.join(frm)}) -> {parent}({', '.join(to)})", add, add + " NOT VALID")
    w("ANALYZE;\n")


def fk_name(t, i):
    return f"{t[:50]}_fk{i + 1}"


def lit(s):
    return "'" + s.replace("'", "''") + "'"


def emit_mysql(tables, db):
    fks = resolve_fk_targets(tables)
    keyed = keyed_columns(tables, fks)
    w = sys.stdout.write
    # One statement per line: `mariadb --force` reports failures by line number,
    # and `mysql-errors` maps each back to the statement's description.
    w(f"-- generated by scripts/db_load.py for database {db}\n")
    w("SET foreign_key_checks = 0, unique_checks = 1, sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION';\n")
    types = {(t, c.name): target_type(c, "mysql", (t, c.name) in keyed, f"{t}.{c.name}")
             for (t, cols, _, _, _, _) in tables for c in cols}
    # InnoDB wants a foreign key's columns and the referenced ones of one type.
    for (t, _, _, _, _, _) in tables:
        for parent, frm, to in fks[t]:
            for a, b in zip(frm, to):
                pair = {types[(t, a)], types[(parent, b)]}
                if pair == {"INT", "BIGINT"}:
                    types[(t, a)] = types[(parent, b)] = "BIGINT"
    for (t, cols, rows, pk, uniques, _) in tables:
        defs = []
        for c in cols:
            ty = types[(t, c.name)]
            defs.append(f"{qmy(c.name)} {ty}" + (" NOT NULL" if c.notnull else ""))
        w(f"CREATE TABLE {qmy(t)} ({', '.join(defs)}) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;\n")
    for (t, cols, rows, pk, uniques, _) in tables:
        names = ", ".join(qmy(c.name) for c in cols)
        for i in range(0, len(rows), 500):
            vals = ",".join("(" + ",".join(my_value(v) for v in r) + ")" for r in rows[i:i + 500])
            w(f"INSERT INTO {qmy(t)} ({names}) VALUES {vals};\n")
    for (t, cols, rows, pk, uniques, _) in tables:
        if pk:
            w(f"-- lucy-load: {t}: primary key ({', '.join(pk)})\n")
            w(f"ALTER TABLE {qmy(t)} ADD PRIMARY KEY ({', '.join(qmy(c) for c in pk)});\n")
        for u in uniques:
            w(f"-- lucy-load: {t}: unique ({', '.join(u)})\n")
            w(f"ALTER TABLE {qmy(t)} ADD UNIQUE ({', '.join(qmy(c) for c in u)});\n")
    # InnoDB needs an index on the referenced columns; SQLite does not (a
    # plain index: it adds no key to the schema).
    indexed = {(t, tuple(pk)) for (t, _, _, pk, _, _) in tables if pk}
    indexed |= {(t, tuple(u)) for (t, _, _, _, us, _) in tables for u in us}
    for (t, cols, rows, pk, uniques, _) in tables:
        for parent, frm, to in fks[t]:
            if (parent, tuple(to)) not in indexed:
                indexed.add((parent, tuple(to)))
                w(f"-- lucy-load: {parent}: index ({', '.join(to)}) for a foreign key\n")
                w(f"ALTER TABLE {qmy(parent)} ADD INDEX ({', '.join(qmy(c) for c in to)});\n")
    for (t, cols, rows, pk, uniques, _) in tables:
        for i, (parent, frm, to) in enumerate(fks[t]):
            w(f"-- lucy-load: {t}: foreign key ({', '.join(frm)}) -> {parent}({', '.join(to)})\n")
            w(f"ALTER TABLE {qmy(t)} ADD CONSTRAINT {qmy(fk_name(t, i))} FOREIGN KEY ({', '.join(qmy(c) for c in frm)}) "
              f"REFERENCES {qmy(parent)} ({', '.join(qmy(c) for c in to)});\n")
    # Rows that break a declared foreign key (kept, as on SQLite, which does not enforce them).
    for (t, cols, rows, pk, uniques, _) in tables:
        for parent, frm, to in fks[t]:
            cond = " AND ".join(f"p.{qmy(b)} = c.{qmy(a)}" for a, b in zip(frm, to))
            nn = " AND ".join(f"c.{qmy(a)} IS NOT NULL" for a in frm)
            desc = lit(f"lucy-load: {t}: foreign key ({', '.join(frm)}) -> {parent}: ")
            w(f"SELECT CONCAT({desc}, COUNT(*), ' rows without a parent (declared, not enforced for them)') FROM {qmy(t)} c "
              f"WHERE {nn} AND NOT EXISTS (SELECT 1 FROM {qmy(parent)} p WHERE {cond}) HAVING COUNT(*) > 0;\n")


def mysql_errors(script, errfile):
    lines = open(script, encoding="utf-8").read().split("\n")
    for e in open(errfile, encoding="utf-8", errors="replace"):
        m = re.match(r"ERROR \d+ \(\w+\) at line (\d+)(?: in file: '[^']*')?: (.*)", e.strip())
        if not m:
            continue  # the client echoes the failing statement between dashes
        n = int(m.group(1))
        desc = lines[n - 2][len("-- lucy-load: "):] if n >= 2 and lines[n - 2].startswith("-- lucy-load: ") else f"line {n}"
        print(f"{desc} not declared: {m.group(2)}")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "mysql-errors":
        mysql_errors(sys.argv[2], sys.argv[3])
        return
    if len(sys.argv) != 4 or sys.argv[1] not in ("postgres", "mysql"):
        sys.exit(__doc__)
    tables = read(sys.argv[2])
    (emit_postgres if sys.argv[1] == "postgres" else emit_mysql)(tables, sys.argv[3])


if __name__ == "__main__":
    main()
