//! Where a query runs: a SQLite file or a PostgreSQL / MySQL / Spark Connect
//! server named by a URL. The password (from the URL, `PGPASSWORD` or
//! `MYSQL_PWD`) and the Spark token (`LUCY_SPARK_TOKEN`) are kept apart from
//! everything printable: [`Database`]'s `Display` and `Debug` never show
//! them, so errors and traces cannot leak them.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::types::Dialect;

/// A database lucy reads from.
#[derive(Clone, PartialEq, Eq)]
pub enum Database {
    /// A SQLite file, opened read-only.
    Sqlite(PathBuf),
    /// A PostgreSQL server (`postgresql://` or `postgres://`).
    Postgres(Server),
    /// A MySQL or MariaDB server (`mysql://` or `mariadb://`).
    Mysql(Server),
    /// A Spark Connect server (`sc://host:port[/database]`).
    Spark(SparkServer),
}

/// The environment variable that holds the Spark Connect bearer token.
pub const SPARK_TOKEN_ENV: &str = "LUCY_SPARK_TOKEN";

/// The parts of a Spark Connect URL, `sc://[user@]host[:port][/database]`.
/// The bearer token comes from [`SPARK_TOKEN_ENV`] (never from the URL) and
/// is private: read it with [`SparkServer::token`].
#[derive(Clone, PartialEq, Eq)]
pub struct SparkServer {
    pub host: String,
    pub port: u16,
    /// The user id sent in Spark Connect's user context (default `lucy`).
    pub user: String,
    token: Option<String>,
    /// The database (Spark's schema) made current for the session, may be empty.
    pub database: String,
}

impl SparkServer {
    /// The bearer token, from [`SPARK_TOKEN_ENV`].
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }
}

/// The parts of a server URL. `password` is private: read it with
/// [`Server::password`], print the server with `Display` (no password).
#[derive(Clone, PartialEq, Eq)]
pub struct Server {
    pub host: String,
    pub port: u16,
    pub user: String,
    password: Option<String>,
    /// Database name (PostgreSQL: the database; MySQL: the schema), may be empty.
    pub database: String,
    /// PostgreSQL: the schema to search and import (`?schema=` or `--schema`).
    pub schema: Option<String>,
}

impl Server {
    /// The password, from the URL or the engine's environment variable.
    pub fn password(&self) -> Option<&str> {
        self.password.as_deref()
    }
}

impl Database {
    /// Read a `--execute`/`--database` argument: a URL with a `postgresql`,
    /// `postgres`, `mysql` or `mariadb` scheme, else a SQLite file path.
    pub fn parse(s: &str) -> Result<Database> {
        let Some((scheme, _)) = s.split_once("://") else {
            return Ok(Database::Sqlite(PathBuf::from(s)));
        };
        match scheme.to_ascii_lowercase().as_str() {
            "postgresql" | "postgres" => Ok(Database::Postgres(parse_server(s, 5432, "PGPASSWORD")?)),
            "mysql" | "mariadb" => Ok(Database::Mysql(parse_server(s, 3306, "MYSQL_PWD")?)),
            "sc" => Ok(Database::Spark(parse_spark(s, std::env::var(SPARK_TOKEN_ENV).ok())?)),
            "file" | "sqlite" => Ok(Database::Sqlite(PathBuf::from(&s[scheme.len() + 3..]))),
            other => Err(Error::Input(format!(
                "{}: unknown database URL scheme `{other}` (use postgresql://, mysql://, sc:// or a SQLite file path)",
                redact_url(s)
            ))),
        }
    }
    /// The same server with this password (read from an environment
    /// variable a project file names); a SQLite file or a Spark server is
    /// returned as it is.
    pub fn with_password(self, password: String) -> Database {
        match self {
            Database::Postgres(s) => Database::Postgres(Server { password: Some(password), ..s }),
            Database::Mysql(s) => Database::Mysql(Server { password: Some(password), ..s }),
            other => other,
        }
    }

    /// The SQL dialect the database speaks.
    pub fn dialect(&self) -> Dialect {
        match self {
            Database::Sqlite(_) => Dialect::Sqlite,
            Database::Postgres(_) => Dialect::Postgres,
            Database::Spark(_) => Dialect::Spark,
            Database::Mysql(_) => Dialect::Mysql,
        }
    }

    /// The SQLite file, if this is one.
    pub fn sqlite_path(&self) -> Option<&Path> {
        match self {
            Database::Sqlite(p) => Some(p),
            _ => None,
        }
    }

    /// The same server with another database name (bench suites with one
    /// database per question, e.g. `spider_{db_id}`).
    pub fn with_database(&self, name: &str) -> Database {
        match self {
            Database::Sqlite(_) => self.clone(),
            Database::Postgres(s) => Database::Postgres(Server { database: name.into(), ..s.clone() }),
            Database::Mysql(s) => Database::Mysql(Server { database: name.into(), ..s.clone() }),
            Database::Spark(s) => Database::Spark(SparkServer { database: name.into(), ..s.clone() }),
        }
    }
}

impl std::str::FromStr for Database {
    type Err = Error;
    fn from_str(s: &str) -> Result<Database> {
        Database::parse(s)
    }
}

/// Serialised as the printable form (no password): options holding a
/// database can go into traces.
impl serde::Serialize for Database {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> serde::Deserialize<'de> for Database {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Database::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for Database {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Database::Sqlite(p) => write!(f, "{}", p.display()),
            Database::Postgres(s) => write!(f, "postgresql://{s}"),
            Database::Mysql(s) => write!(f, "mysql://{s}"),
            Database::Spark(s) => write!(f, "{s}"),
        }
    }
}

impl fmt::Debug for Database {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Database({self})")
    }
}

impl fmt::Display for Server {
    /// `user@host:port/database`, never the password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.user.is_empty() {
            write!(f, "{}@", pct(&self.user))?;
        }
        if self.host.contains(':') {
            write!(f, "[{}]", self.host)?;
        } else {
            f.write_str(&self.host)?;
        }
        write!(f, ":{}/{}", self.port, pct(&self.database))?;
        if let Some(s) = &self.schema {
            write!(f, "?schema={}", pct(s))?;
        }
        Ok(())
    }
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Server({self}, password: {})", if self.password.is_some() { "<set>" } else { "<none>" })
    }
}

impl fmt::Display for SparkServer {
    /// `sc://[user@]host:port[/database]`, never the token.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sc://")?;
        if !self.user.is_empty() && self.user != "lucy" {
            write!(f, "{}@", pct(&self.user))?;
        }
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)?;
        } else {
            write!(f, "{}:{}", self.host, self.port)?;
        }
        if !self.database.is_empty() {
            write!(f, "/{}", pct(&self.database))?;
        }
        Ok(())
    }
}

impl fmt::Debug for SparkServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SparkServer({self}, token: {})", if self.token.is_some() { "<set>" } else { "<none>" })
    }
}

/// Read `sc://[user@]host[:port][/database]` (Spark Connect's default port
/// 15002); `token` is the value of [`SPARK_TOKEN_ENV`]. A token, password or
/// `;key=value` parameters in the URL are refused (with the secret masked):
/// URLs end up in shell history, traces and reports.
fn parse_spark(s: &str, token: Option<String>) -> Result<SparkServer> {
    let shown = redact_url(s);
    if s.contains(';') {
        return Err(Error::Input(format!(
            "{shown}: Spark Connect URL parameters (`;key=value`) are not supported; put the token in {SPARK_TOKEN_ENV}"
        )));
    }
    let u = url::Url::parse(s).map_err(|e| Error::Input(format!("{shown}: not a valid Spark Connect URL: {e}")))?;
    if u.password().is_some() {
        return Err(Error::Input(format!("{shown}: put the Spark token in {SPARK_TOKEN_ENV}, not in the URL")));
    }
    if u.query().is_some() || u.fragment().is_some() {
        return Err(Error::Input(format!(
            "{shown}: a Spark Connect URL takes no `?` parameters (sc://host:port[/database])"
        )));
    }
    let host = match u.host_str() {
        Some(h) if !h.is_empty() => h.trim_start_matches('[').trim_end_matches(']').to_string(),
        _ => return Err(Error::Input(format!("{shown}: the URL names no host (sc://host:port[/database])"))),
    };
    let decode = |x: &str| {
        percent_encoding::percent_decode_str(x)
            .decode_utf8()
            .map(|c| c.into_owned())
            .map_err(|_| Error::Input(format!("{shown}: the URL's user or database is not UTF-8")))
    };
    let user = match decode(u.username())? {
        u if u.is_empty() => "lucy".to_string(),
        u => u,
    };
    let database = decode(u.path().trim_start_matches('/'))?;
    if database.contains('/') {
        return Err(Error::Input(format!("{shown}: the URL's path must be one database name")));
    }
    Ok(SparkServer { host, port: u.port().unwrap_or(15002), user, token: token.filter(|t| !t.is_empty()), database })
}

fn pct(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>().replace('+', "%20")
}

fn parse_server(s: &str, default_port: u16, pw_env: &str) -> Result<Server> {
    let shown = redact_url(s);
    let u = url::Url::parse(s).map_err(|e| Error::Input(format!("{shown}: not a valid database URL: {e}")))?;
    let decode = |x: &str| {
        percent_encoding::percent_decode_str(x)
            .decode_utf8()
            .map(|c| c.into_owned())
            .map_err(|_| Error::Input(format!("{shown}: the URL's user, password or database is not UTF-8")))
    };
    let host = match u.host() {
        Some(url::Host::Domain(d)) => d.to_string(),
        Some(url::Host::Ipv4(a)) => a.to_string(),
        Some(url::Host::Ipv6(a)) => a.to_string(),
        None => "localhost".to_string(),
    };
    let user = decode(u.username())?;
    let password = match u.password() {
        Some(p) => Some(decode(p)?),
        None => std::env::var(pw_env).ok().filter(|p| !p.is_empty()),
    };
    let database = decode(u.path().trim_start_matches('/'))?;
    if database.contains('/') {
        return Err(Error::Input(format!("{shown}: the URL's path must be one database name")));
    }
    let mut schema = None;
    for (k, v) in u.query_pairs() {
        match k.as_ref() {
            "schema" | "currentSchema" => schema = Some(v.into_owned()),
            "sslmode" | "ssl-mode" if matches!(v.as_ref(), "disable" | "DISABLED" | "prefer" | "PREFERRED") => {}
            "sslmode" | "ssl-mode" => {
                return Err(Error::Input(format!(
                    "{shown}: TLS (`{k}={v}`) is not supported by this build; connect over loopback, a socket tunnel, or a trusted network"
                )))
            }
            "connect_timeout" | "application_name" => {}
            other => return Err(Error::Input(format!("{shown}: unknown URL parameter `{other}` (known: schema, sslmode=disable)"))),
        }
    }
    Ok(Server { host, port: u.port().unwrap_or(default_port), user, password, database, schema })
}

/// `s` with the password of a `scheme://user:password@…` URL replaced by
/// `***`, and the value of a Spark Connect `;token=…` parameter too, for
/// messages about a URL that may not even parse.
pub fn redact_url(s: &str) -> String {
    let Some((scheme, rest)) = s.split_once("://") else { return s.to_string() };
    // Every `;token=…` value (ASCII lower-casing keeps byte offsets).
    let mut masked = String::with_capacity(rest.len());
    let mut from = 0;
    while let Some(at) = rest[from..].to_ascii_lowercase().find(";token=") {
        let start = from + at + ";token=".len();
        let end = rest[start..].find(';').map(|e| start + e).unwrap_or(rest.len());
        masked.push_str(&rest[from..start]);
        masked.push_str("***");
        from = end;
    }
    masked.push_str(&rest[from..]);
    let rest = masked.as_str();
    let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (auth, tail) = rest.split_at(auth_end);
    match auth.rfind('@') {
        Some(at) => {
            let (cred, host) = auth.split_at(at);
            let user = cred.split_once(':').map(|(u, _)| u).unwrap_or(cred);
            let masked = if cred.contains(':') { format!("{user}:***") } else { user.to_string() };
            format!("{scheme}://{masked}{host}{tail}")
        }
        None => format!("{scheme}://{rest}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_paths() {
        let d = Database::parse("postgresql://lucy:s3cret@127.0.0.1:54329/ddo").unwrap();
        assert_eq!(d.dialect(), Dialect::Postgres);
        assert_eq!(d.to_string(), "postgresql://lucy@127.0.0.1:54329/ddo");
        assert!(!format!("{d:?}").contains("s3cret"));
        let Database::Postgres(s) = &d else { panic!() };
        assert_eq!(s.password(), Some("s3cret"));
        let m = Database::parse("mysql://u%40x:p%2Fw@db.example:3307/shop").unwrap();
        let Database::Mysql(s) = &m else { panic!() };
        assert_eq!((s.user.as_str(), s.password(), s.port, s.database.as_str()), ("u@x", Some("p/w"), 3307, "shop"));
        assert_eq!(m.dialect(), Dialect::Mysql);
        assert_eq!(Database::parse("dbmodels/ddo.sqlite").unwrap(), Database::Sqlite("dbmodels/ddo.sqlite".into()));
        let p = Database::parse("postgres://h/x?schema=sales").unwrap();
        let Database::Postgres(s) = &p else { panic!() };
        assert_eq!((s.port, s.schema.as_deref()), (5432, Some("sales")));
        assert_eq!(p.with_database("y").to_string(), "postgresql://h:5432/y?schema=sales");
    }

    #[test]
    fn spark_urls() {
        let d = Database::Spark(parse_spark("sc://127.0.0.1:15029/ddo", Some("t0ken".into())).unwrap());
        assert_eq!(d.dialect(), Dialect::Spark);
        assert_eq!(d.to_string(), "sc://127.0.0.1:15029/ddo");
        assert!(!format!("{d:?}").contains("t0ken"), "{d:?}");
        let Database::Spark(s) = &d else { panic!() };
        assert!(format!("{s:?}").contains("token: <set>") && !format!("{s:?}").contains("t0ken"), "{s:?}");
        assert_eq!(
            (s.host.as_str(), s.port, s.user.as_str(), s.database.as_str()),
            ("127.0.0.1", 15029, "lucy", "ddo")
        );
        assert_eq!(s.token(), Some("t0ken"));
        assert_eq!(d.with_database("acme").to_string(), "sc://127.0.0.1:15029/acme");
        let s = parse_spark("sc://ana@spark.internal", None).unwrap();
        assert_eq!(
            (s.host.as_str(), s.port, s.user.as_str(), s.database.as_str()),
            ("spark.internal", 15002, "ana", "")
        );
        assert_eq!(s.to_string(), "sc://ana@spark.internal:15002");
        assert_eq!(s.token(), None);
        assert_eq!(parse_spark("sc://h:1", Some(String::new())).unwrap().token(), None);
        assert!(matches!(Database::parse("sc://spark.internal:15002").unwrap(), Database::Spark(_)));
    }

    #[test]
    fn spark_url_errors_name_the_fix_and_hide_the_token() {
        for (bad, says) in [
            ("sc://h:15002/;token=hunter2", "LUCY_SPARK_TOKEN"),
            ("sc://u:hunter2@h:15002/ddo", "LUCY_SPARK_TOKEN"),
            ("sc://h:15002/ddo?token=x", "no `?` parameters"),
            ("sc://h:15002/a/b", "one database name"),
            ("sc:///ddo", "no host"),
            ("sc://h:99999/ddo", "not a valid Spark Connect URL"),
        ] {
            let e = Database::parse(bad).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{e}");
            let e = e.to_string();
            assert!(e.contains(says), "{bad}: {e}");
            assert!(!e.contains("hunter2"), "{e}");
        }
    }

    #[test]
    fn errors_never_show_the_password() {
        for bad in
            ["oracle://u:hunter2@h/x", "postgresql://u:hunter2@h/x?sslmode=require", "postgresql://u:hunter2@h/x?foo=1"]
        {
            let e = Database::parse(bad).unwrap_err().to_string();
            assert!(!e.contains("hunter2"), "{e}");
            assert!(e.contains("u:***@h"), "{e}");
        }
        assert_eq!(redact_url("mysql://a:b:c@h:1/d?x=y"), "mysql://a:***@h:1/d?x=y");
        assert_eq!(redact_url("sc://h:1/;token=abc;user_id=x"), "sc://h:1/;token=***;user_id=x");
        assert_eq!(redact_url("sc://u:p@h:1/;use_ssl=true;Token=abc"), "sc://u:***@h:1/;use_ssl=true;Token=***");
        assert_eq!(redact_url("mysql://h/d"), "mysql://h/d");
    }
}
