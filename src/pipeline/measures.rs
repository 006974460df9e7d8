//! The class of a column's declared SQL type (a number, a date or time, a
//! text), which `--value-literals` reads to tell a numeric column
//! (`check::values`). `--typed-measures`, which typed SUM, AVG and
//! arithmetic by it, was measured off (DDO 12 → 12, the Spider sample's
//! first 50 29 → 29; benchmarks/results/embedded.md, session 12) and
//! deleted in session 26.

/// What a column can be, by its declared SQL type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeClass {
    /// INT, REAL, FLOAT, DOUBLE, NUMERIC, DECIMAL, NUMBER, MONEY.
    Number,
    /// DATE, TIME, DATETIME, TIMESTAMP, INTERVAL; BOOL, BOOLEAN.
    Temporal,
    /// CHAR, VARCHAR, TEXT, STRING, CLOB, ENUM, and no declared type.
    Text,
    /// Anything else (BLOB, JSON, …).
    Other,
}

/// The class of a declared SQL type (case-insensitive; `DECIMAL(10,2)`
/// reads as DECIMAL).
pub fn type_class(sql_type: &str) -> TypeClass {
    let u = sql_type.trim().to_ascii_uppercase();
    if u.is_empty() {
        return TypeClass::Text;
    }
    // Whole words only (`POINT` ends in INT): the first word decides a
    // date or time; any word a number (`UNSIGNED INT`, `INT UNSIGNED`).
    let words: Vec<&str> = u.split(|c: char| !c.is_ascii_alphabetic()).filter(|w| !w.is_empty()).collect();
    let first = words.first().copied().unwrap_or("");
    if ["DATE", "TIME", "DATETIME", "TIMESTAMP", "TIMESTAMPTZ", "INTERVAL", "YEAR", "BOOL", "BOOLEAN"].contains(&first)
    {
        return TypeClass::Temporal;
    }
    const NUMBER_WORDS: &[&str] = &[
        "INT",
        "INTEGER",
        "BIGINT",
        "SMALLINT",
        "TINYINT",
        "MEDIUMINT",
        "SERIAL",
        "BIGSERIAL",
        "SMALLSERIAL",
        "REAL",
        "FLOAT",
        "DOUBLE",
        "NUMERIC",
        "DECIMAL",
        "DEC",
        "NUMBER",
        "MONEY",
        "FIXED",
    ];
    if words.iter().any(|w| NUMBER_WORDS.contains(w)) {
        return TypeClass::Number;
    }
    if crate::link::values::is_text_type(&u) {
        return TypeClass::Text;
    }
    TypeClass::Other
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_classes() {
        for t in [
            "INTEGER",
            "int",
            "BIGINT",
            "REAL",
            "DOUBLE PRECISION",
            "DECIMAL(10,2)",
            "decimal(10,2)",
            "bigint",
            "numeric",
            "NUMBER(5)",
            "unsigned int",
        ] {
            assert_eq!(type_class(t), TypeClass::Number, "{t}");
        }
        for t in ["DATE", "datetime", "TIMESTAMP WITH TIME ZONE", "TIME", "BOOLEAN", "bool"] {
            assert_eq!(type_class(t), TypeClass::Temporal, "{t}");
        }
        for t in ["TEXT", "VARCHAR(20)", "char(3)", "", "STRING"] {
            assert_eq!(type_class(t), TypeClass::Text, "{t}");
        }
        assert_eq!(type_class("POINT"), TypeClass::Other);
        assert_eq!(type_class("BLOB"), TypeClass::Other);
    }
}
