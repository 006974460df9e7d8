//! Importers: DDL, SQLite, BIRD/Spider tables.json.
