//! The dbModel: one JSON document that describes a database for the planner.
//!
//! The format follows Appendix D.1 of the Lucy paper in content (tables with
//! keys and descriptions, relationships with cardinality, higher-level
//! patterns) but as one self-contained file. `docs/dbmodel.md` documents it
//! and `docs/dbmodel.schema.json` is generated from these types.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A whole dbModel.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DbModel {
    /// Short name of the database (used in prompts and view names).
    pub name: String,
    /// What the database is about, for prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// SQL dialect of the source database, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialect: Option<Dialect>,
    /// Every table of the database that the planner may use.
    pub tables: Vec<Table>,
    /// Join relationships (declared foreign keys and curated ones).
    #[serde(default)]
    pub relationships: Vec<Relationship>,
    /// Higher-level design patterns: m:m, star, snowflake, lookup.
    #[serde(default)]
    pub patterns: Vec<Pattern>,
    /// User constraints that GenerateView must honour.
    #[serde(default, skip_serializing_if = "Constraints::is_empty")]
    pub constraints: Constraints,
}

/// One table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Table {
    /// Name of the table in the model, the prompts and the view's column
    /// aliases; unique case-insensitively. Also its SQL name unless
    /// `relation` says otherwise.
    pub name: String,
    /// Where the table lives when `name` alone does not find it through
    /// the connection's search path: the parts of its qualified SQL name,
    /// each quoted on its own (`["marts", "orders"]` is `marts.orders`,
    /// `["analytics", "marts", "orders"]` adds a catalog). The last part is
    /// the table's SQL name. Written by `lucy model import --dbt` (a
    /// model's schema and alias); empty means `name`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relation: Vec<String>,
    /// What a row of the table is; shown to the LLM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Primary key columns; composite keys list several columns.
    #[serde(default)]
    pub primary_key: Vec<String>,
    /// The table's columns (at least one).
    pub columns: Vec<Column>,
    /// Other words users (and the schema's own documentation) use for a
    /// row of the table ("insured party", "policy holder"). Used by
    /// candidate retrieval and the verification prompts of MatchTables
    /// (docs/phases.md); non-empty, no duplicates within the table.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub synonyms: Vec<String>,
    /// Where the element came from, written by importers (`dbt: model
    /// shop.orders`, `dbt: test relationships_orders_customer_id…`) and
    /// shown by `lucy model show`; never read by the planner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

/// One column of a table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Column {
    /// SQL name of the column; unique within its table, case-insensitively.
    pub name: String,
    /// SQL type as written in the DDL (e.g. `INTEGER`, `varchar(100)`).
    #[serde(rename = "type", default)]
    pub sql_type: String,
    /// Whether the column may be NULL (default true).
    #[serde(default = "default_true")]
    pub nullable: bool,
    /// What the column holds (units, codes, meaning); shown to the LLM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Other words for what the column holds ("premium" for
    /// `Policy_Amount`); as [`Table::synonyms`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub synonyms: Vec<String>,
    /// Where the element came from, written by importers (`dbt: model
    /// shop.orders`, `dbt: test relationships_orders_customer_id…`) and
    /// shown by `lucy model show`; never read by the planner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

fn default_true() -> bool {
    true
}

/// Cardinality of a relationship, read from `from` to `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum Cardinality {
    /// One `from` row per `to` row and vice versa.
    #[serde(rename = "1:1")]
    OneToOne,
    /// Many `to` rows per `from` row: `to` holds the foreign key.
    #[serde(rename = "1:M", alias = "1:m", alias = "1:N", alias = "1:n")]
    OneToMany,
    /// Many `from` rows per `to` row: `from` holds the foreign key.
    #[serde(rename = "M:1", alias = "m:1", alias = "N:1", alias = "n:1")]
    ManyToOne,
}

impl Cardinality {
    /// The same relationship read from `to` to `from`.
    pub fn reversed(self) -> Self {
        match self {
            Cardinality::OneToOne => Cardinality::OneToOne,
            Cardinality::OneToMany => Cardinality::ManyToOne,
            Cardinality::ManyToOne => Cardinality::OneToMany,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Cardinality::OneToOne => "1:1",
            Cardinality::OneToMany => "1:M",
            Cardinality::ManyToOne => "M:1",
        }
    }
}

/// A join relationship between two tables. Usually `from` holds the foreign
/// key and `to` the referenced key (cardinality `M:1`), but any direction is
/// allowed as long as `cardinality` is read from `from` to `to`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Relationship {
    /// Optional stable name; patterns and constraints may refer to it. When
    /// absent the relationship is named `FROM(cols)->TO(cols)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Table on the `from` side (for `M:1`, the table holding the foreign key).
    pub from: String,
    /// Table on the `to` side (for `M:1`, the referenced table).
    pub to: String,
    /// Cardinality read from `from` to `to`.
    pub cardinality: Cardinality,
    /// Join column pairs `[from_column, to_column]`; several for composite keys.
    pub on: Vec<[String; 2]>,
    /// What the relationship means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Role of the `to` table in this relationship, when a table plays
    /// several (`bill_address`, `ship_address`, `manager`): a request names
    /// the instance `TABLE@role` and the view calls it `TABLE_<role>`.
    /// Letters, digits and `_`; unique among the relationships of each of
    /// its two tables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// What the role means ("the address the invoice goes to"); shown in
    /// the description of every view column of the instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role_description: Option<String>,
    /// Other words for the role ("insurer" for `Party@insurer`); as
    /// [`Table::synonyms`]. Only with `role`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub role_synonyms: Vec<String>,
    /// A table this relationship short-cuts: joining `from` to `to` here
    /// gives the same row as joining both through `via` (ACME's
    /// Policy_Amount → Policy agrees with Policy_Amount → Policy_Coverage_Detail
    /// → Policy). GenerateView does not use the relationship while `via` is
    /// relevant: the view then joins through `via`, which the question needs
    /// anyway. `via` must be joined to both ends by relationships.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// Where the element came from, written by importers (`dbt: model
    /// shop.orders`, `dbt: test relationships_orders_customer_id…`) and
    /// shown by `lucy model show`; never read by the planner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

impl Relationship {
    /// The name used to refer to this relationship in patterns, constraints,
    /// traces and ambiguity reports.
    pub fn id(&self) -> String {
        match &self.name {
            Some(n) => n.clone(),
            None => {
                let l: Vec<&str> = self.on.iter().map(|p| p[0].as_str()).collect();
                let r: Vec<&str> = self.on.iter().map(|p| p[1].as_str()).collect();
                format!("{}({})->{}({})", self.from, l.join(","), self.to, r.join(","))
            }
        }
    }
}

/// A higher-level design pattern (Lucy §3.1, Appendix D.1.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Pattern {
    /// A junction table that models a many-to-many relationship between two
    /// side tables.
    ManyToMany {
        /// The junction (join) table.
        junction: String,
        /// The two side tables.
        sides: [String; 2],
        /// Optional names of the two junction relationships (junction–side
        /// 0, junction–side 1). Inferred when absent and unambiguous.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        relationships: Option<[String; 2]>,
        /// What the pattern models, in the user's words.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    /// A fact table with dimension tables around it.
    Star {
        /// The central fact table (a core table).
        root: String,
        /// Inner tables joined to the root, each with its own children.
        children: Vec<PatternNode>,
        /// What the pattern models, in the user's words.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// The root's children are exclusive subtypes: each root row has
        /// rows in exactly one of them (ACME's `Claim_Amount` is a loss
        /// payment, a loss reserve, …). Needs at least two children. Inner
        /// nodes say the same with `PatternNode::exclusive`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        exclusive: bool,
    },
    /// A root table with a tree of inner tables of any depth.
    Snowflake {
        /// The root table (a core table).
        root: String,
        /// Inner tables joined to the root, each with its own children.
        children: Vec<PatternNode>,
        /// What the pattern models, in the user's words.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// The root's children are exclusive subtypes: each root row has
        /// rows in exactly one of them (ACME's `Claim_Amount` is a loss
        /// payment, a loss reserve, …). Needs at least two children. Inner
        /// nodes say the same with `PatternNode::exclusive`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        exclusive: bool,
    },
    /// Tables that act as look-up functions (e.g. LOCATION): a path may
    /// enter and leave them only from the same table.
    Lookup {
        /// The look-up tables.
        tables: Vec<String>,
        /// What the pattern models, in the user's words.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
}

/// An inner table of a star or snowflake and its own children.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PatternNode {
    /// The inner table.
    pub table: String,
    /// Name (or `FROM(cols)->TO(cols)` id) of the relationship that joins
    /// this table to its parent. Needed only when several relationships
    /// connect the two tables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relationship: Option<String>,
    /// Inner tables joined to this one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<PatternNode>,
    /// The children are exclusive subtypes: each row of this table has rows
    /// in exactly one of them (DDO's PAYAMOUNT is a TAX, a SUPERCHARGE or an
    /// INCOME). Needs at least two children. Shown by `lucy model show`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exclusive: bool,
}

impl PatternNode {
    /// An inner table without children, joined to its parent by the only
    /// relationship between them.
    pub fn leaf(table: impl Into<String>) -> Self {
        PatternNode { table: table.into(), ..Default::default() }
    }

    /// An inner table with children.
    pub fn with_children(table: impl Into<String>, children: Vec<PatternNode>) -> Self {
        PatternNode { table: table.into(), children, ..Default::default() }
    }
}

/// User constraints honoured by GenerateView.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Constraints {
    /// Tables the view must never use.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forbid_tables: Vec<String>,
    /// Relationships the view must never join along: a relationship name (or
    /// its `FROM(cols)->TO(cols)` id), or `"A-B"` for every relationship
    /// between tables A and B.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forbid_relationships: Vec<String>,
    /// Tables every view must include (e.g. a tenant table).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub require_tables: Vec<String>,
}

impl Constraints {
    pub fn is_empty(&self) -> bool {
        self.forbid_tables.is_empty() && self.forbid_relationships.is_empty() && self.require_tables.is_empty()
    }
}

/// SQL dialects lucy reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    #[default]
    Sqlite,
    Mysql,
    Postgres,
    // Apache Spark SQL (also Databricks SQL): backtick-quoted names,
    // case-insensitive resolution, backslash escapes in strings, and a
    // double-quoted text is a string literal. (A plain comment: a doc
    // comment here would turn the JSON Schema's enum into a oneOf.)
    Spark,
}

impl Dialect {
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Sqlite => "sqlite",
            Dialect::Mysql => "mysql",
            Dialect::Postgres => "postgres",
            Dialect::Spark => "spark",
        }
    }

    /// The dialect quotes names with backticks (MySQL, Spark); the others
    /// with double quotes.
    pub fn backtick_names(self) -> bool {
        matches!(self, Dialect::Mysql | Dialect::Spark)
    }

    /// The quote character of a quoted name.
    pub fn name_quote(self) -> char {
        if self.backtick_names() {
            '`'
        } else {
            '"'
        }
    }

    /// String literals take backslash escapes (MySQL, Spark).
    pub fn backslash_escapes(self) -> bool {
        matches!(self, Dialect::Mysql | Dialect::Spark)
    }

    /// The sqlparser dialect that reads this dialect (the one mapping).
    pub fn parser(self) -> Box<dyn sqlparser::dialect::Dialect> {
        use sqlparser::dialect::{DatabricksDialect, MySqlDialect, PostgreSqlDialect, SQLiteDialect};
        match self {
            Dialect::Sqlite => Box::new(SQLiteDialect {}),
            Dialect::Mysql => Box::new(MySqlDialect {}),
            Dialect::Postgres => Box::new(PostgreSqlDialect {}),
            // Databricks SQL is Spark SQL; sqlparser 0.63's SparkSqlDialect
            // lacks Spark's backslash escapes in strings, this one has them.
            Dialect::Spark => Box::new(DatabricksDialect {}),
        }
    }
}

impl DbModel {
    /// Index of a table by name, case-insensitively.
    pub fn table_index(&self, name: &str) -> Option<usize> {
        self.tables.iter().position(|t| t.name.eq_ignore_ascii_case(name))
    }

    /// A table by name, case-insensitively.
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.table_index(name).map(|i| &self.tables[i])
    }
}

impl Table {
    /// A column by name, case-insensitively.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name.eq_ignore_ascii_case(name))
    }
}
