//! The Spark backend (feature `spark`): Spark Connect over gRPC. One new
//! session per query (a random session id, released at the end), so
//! nothing of one query is seen by the next. The steps:
//!
//! 1. the session's configuration ([`SESSION_CONF`]): the reading of names
//!    and strings pinned to the Spark dialect lucy writes and its guard
//!    parses, whatever the cluster's defaults — session settings, no data;
//! 2. with a database in the URL, the catalog's `setCurrentDatabase` (Spark
//!    Connect's catalog relation, not SQL);
//! 3. the guarded SELECT, with the view inlined as a CTE, as the one SQL
//!    relation of the plan, tagged with a fresh operation tag. Spark has no
//!    read-only transaction, so a second guard stands on the server side:
//!    the SQL is sent as `SELECT * FROM (<query>) AS lucy_q`, which Spark's
//!    parser accepts only for a query (a DDL, DML or command statement there
//!    is a syntax error, never run);
//! 4. Arrow IPC batches read one by one through the bounds ([`Collector`]);
//!    at the time limit the operation is interrupted on the server by its
//!    tag (and the stream dropped); a cut result interrupts it too.
//!
//! The bearer token (`LUCY_SPARK_TOKEN`) travels only in the `authorization`
//! header; errors name the server by its URL without it.

use std::io::Cursor;
use std::time::{Duration, Instant};

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType, UInt16Type,
    UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, TimeUnit};
use tonic::codegen::http::uri::PathAndQuery;
use tonic::transport::{Channel, Endpoint};

use super::bound::Collector;
use super::postgres::{civil, time_of_day};
use super::target::{Database, SparkServer, SPARK_TOKEN_ENV};
use super::{server_sql, CatalogColumn, CatalogTable, ExecOptions, QueryRows, SqlValue, ViewDef};
use crate::error::{Error, Result};

/// The few Spark Connect messages lucy sends and reads (spark/connect/*.proto
/// of Spark 4; field numbers as in the `pyspark` 4.3.0 package's generated
/// descriptors). Fields of a `oneof` are declared as optional fields with
/// the same numbers: the same bytes on the wire. Fields lucy does not read
/// are skipped by the decoder.
mod proto {
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct UserContext {
        #[prost(string, tag = "1")]
        pub user_id: String,
        #[prost(string, tag = "2")]
        pub user_name: String,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ExecutePlanRequest {
        #[prost(string, tag = "1")]
        pub session_id: String,
        #[prost(message, optional, tag = "2")]
        pub user_context: Option<UserContext>,
        #[prost(message, optional, tag = "3")]
        pub plan: Option<Plan>,
        #[prost(string, optional, tag = "4")]
        pub client_type: Option<String>,
        #[prost(string, optional, tag = "6")]
        pub operation_id: Option<String>,
        #[prost(string, repeated, tag = "7")]
        pub tags: Vec<String>,
    }

    /// `oneof op_type { Relation root = 1; ... }`
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Plan {
        #[prost(message, optional, tag = "1")]
        pub root: Option<Relation>,
    }

    /// `oneof rel_type { SQL sql = 10; Catalog catalog = 200; ... }`
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Relation {
        #[prost(message, optional, tag = "10")]
        pub sql: Option<Sql>,
        #[prost(message, optional, tag = "200")]
        pub catalog: Option<Catalog>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Sql {
        #[prost(string, tag = "1")]
        pub query: String,
    }

    /// `oneof cat_type { SetCurrentDatabase = 2; ListDatabases = 3; ListTables = 4; ListColumns = 6; ... }`
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Catalog {
        #[prost(message, optional, tag = "2")]
        pub set_current_database: Option<SetCurrentDatabase>,
        #[prost(message, optional, tag = "3")]
        pub list_databases: Option<ListDatabases>,
        #[prost(message, optional, tag = "4")]
        pub list_tables: Option<ListTables>,
        #[prost(message, optional, tag = "6")]
        pub list_columns: Option<ListColumns>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ListColumns {
        #[prost(string, tag = "1")]
        pub table_name: String,
        #[prost(string, optional, tag = "2")]
        pub db_name: Option<String>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct SetCurrentDatabase {
        #[prost(string, tag = "1")]
        pub db_name: String,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ListDatabases {
        #[prost(string, optional, tag = "1")]
        pub pattern: Option<String>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ListTables {
        #[prost(string, optional, tag = "1")]
        pub db_name: Option<String>,
        #[prost(string, optional, tag = "2")]
        pub pattern: Option<String>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ExecutePlanResponse {
        #[prost(string, tag = "1")]
        pub session_id: String,
        #[prost(message, optional, tag = "2")]
        pub arrow_batch: Option<ArrowBatch>,
        #[prost(string, tag = "12")]
        pub operation_id: String,
        #[prost(message, optional, tag = "14")]
        pub result_complete: Option<ResultComplete>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ArrowBatch {
        #[prost(int64, tag = "1")]
        pub row_count: i64,
        #[prost(bytes = "vec", tag = "2")]
        pub data: Vec<u8>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ResultComplete {}

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct InterruptRequest {
        #[prost(string, tag = "1")]
        pub session_id: String,
        #[prost(message, optional, tag = "2")]
        pub user_context: Option<UserContext>,
        #[prost(string, optional, tag = "3")]
        pub client_type: Option<String>,
        /// `INTERRUPT_TYPE_TAG = 2`
        #[prost(int32, tag = "4")]
        pub interrupt_type: i32,
        #[prost(string, optional, tag = "5")]
        pub operation_tag: Option<String>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct InterruptResponse {
        #[prost(string, tag = "1")]
        pub session_id: String,
        #[prost(string, repeated, tag = "2")]
        pub interrupted_ids: Vec<String>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ConfigRequest {
        #[prost(string, tag = "1")]
        pub session_id: String,
        #[prost(message, optional, tag = "2")]
        pub user_context: Option<UserContext>,
        #[prost(message, optional, tag = "3")]
        pub operation: Option<ConfigOperation>,
        #[prost(string, optional, tag = "4")]
        pub client_type: Option<String>,
    }

    /// `oneof op_type { Set set = 1; ... }`
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ConfigOperation {
        #[prost(message, optional, tag = "1")]
        pub set: Option<ConfigSet>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ConfigSet {
        #[prost(message, repeated, tag = "1")]
        pub pairs: Vec<KeyValue>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct KeyValue {
        #[prost(string, tag = "1")]
        pub key: String,
        #[prost(string, optional, tag = "2")]
        pub value: Option<String>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ConfigResponse {
        #[prost(string, tag = "1")]
        pub session_id: String,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ReleaseSessionRequest {
        #[prost(string, tag = "1")]
        pub session_id: String,
        #[prost(message, optional, tag = "2")]
        pub user_context: Option<UserContext>,
        #[prost(string, optional, tag = "3")]
        pub client_type: Option<String>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ReleaseSessionResponse {
        #[prost(string, tag = "1")]
        pub session_id: String,
    }
}

use proto::*;

const CONFIG: &str = "/spark.connect.SparkConnectService/Config";
const EXECUTE_PLAN: &str = "/spark.connect.SparkConnectService/ExecutePlan";
const INTERRUPT: &str = "/spark.connect.SparkConnectService/Interrupt";
const RELEASE_SESSION: &str = "/spark.connect.SparkConnectService/ReleaseSession";
const CLIENT_TYPE: &str = "lucy";
/// Largest gRPC message lucy accepts (one Arrow batch; Spark sends at most
/// about 4 MiB per batch by default).
const MAX_MESSAGE: usize = 64 << 20;
/// How long a setup call (configuration, current database, interrupt,
/// release) may take at most.
const SETUP_LIMIT: Duration = Duration::from_secs(30);

/// One Spark Connect session on one channel.
struct Session {
    grpc: tonic::client::Grpc<Channel>,
    server: SparkServer,
    id: String,
}

/// Session settings sent before every query: a double-quoted text is a
/// string and names resolve case-insensitively, as in lucy's Spark dialect
/// (`Dialect::Spark`) and its checks (a cluster may default otherwise).
const SESSION_CONF: &[(&str, &str)] =
    &[("spark.sql.ansi.doubleQuotedIdentifiers", "false"), ("spark.sql.caseSensitive", "false")];

/// A random UUID (version 4), as Spark wants for session and operation ids.
fn uuid() -> String {
    let b: [u8; 16] = rand::random();
    let mut b = b;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..])
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Db(format!("cannot start the Spark Connect client: {e}")))
}

/// A gRPC status as one line: Spark's message (its first lines; the rest
/// is a server stack trace when there is one).
fn status_text(s: &tonic::Status) -> String {
    let msg: Vec<&str> = s.message().lines().take(6).collect();
    let msg = msg.join(" ").trim().to_string();
    if msg.is_empty() {
        format!("{:?}", s.code())
    } else {
        msg
    }
}

/// The error of a failed call: the connection and the token are the
/// caller's input (exit 2), a query error is the database's (exit 1).
fn call_error(server: &SparkServer, what: &str, s: &tonic::Status) -> Error {
    let shown = Database::Spark(server.clone());
    match s.code() {
        tonic::Code::Unauthenticated | tonic::Code::PermissionDenied => Error::Input(format!(
            "{shown} refused the {} ({}): {}",
            if server.token().is_some() {
                "token in LUCY_SPARK_TOKEN"
            } else {
                "request without a token (set LUCY_SPARK_TOKEN)"
            },
            what,
            status_text(s)
        )),
        tonic::Code::Unavailable | tonic::Code::Unknown if s.message().contains("transport error") => {
            Error::Input(format!("cannot connect to {shown}: {}", status_text(s)))
        }
        tonic::Code::Unavailable => Error::Input(format!("cannot reach {shown} ({what}): {}", status_text(s))),
        _ => Error::Db(format!("{what} on {shown}: {}", status_text(s))),
    }
}

impl Session {
    async fn open(server: &SparkServer, timeout: Duration) -> Result<Session> {
        let shown = Database::Spark(server.clone());
        let host = if server.host.contains(':') { format!("[{}]", server.host) } else { server.host.clone() };
        let limit = timeout.min(SETUP_LIMIT);
        let endpoint = Endpoint::from_shared(format!("http://{host}:{}", server.port))
            .map_err(|e| Error::Input(format!("{shown}: not a valid Spark Connect address: {e}")))?
            .connect_timeout(limit)
            .tcp_nodelay(true);
        let channel = match tokio::time::timeout(limit, endpoint.connect()).await {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => {
                let mut m = e.to_string();
                let mut src = std::error::Error::source(&e);
                while let Some(s) = src {
                    m.push_str(&format!(": {s}"));
                    src = s.source();
                }
                return Err(Error::Input(format!("cannot connect to {shown}: {m}")));
            }
            Err(_) => {
                return Err(Error::Input(format!(
                    "cannot connect to {shown}: no answer in {:.0} s",
                    limit.as_secs_f64()
                )))
            }
        };
        let grpc = tonic::client::Grpc::new(channel).max_decoding_message_size(MAX_MESSAGE);
        Ok(Session { grpc, server: server.clone(), id: uuid() })
    }

    fn user(&self) -> Option<UserContext> {
        Some(UserContext { user_id: self.server.user.clone(), user_name: self.server.user.clone() })
    }

    fn request<T>(&self, msg: T) -> Result<tonic::Request<T>> {
        let mut req = tonic::Request::new(msg);
        if let Some(t) = self.server.token() {
            let v = format!("Bearer {t}").parse().map_err(|_| {
                Error::Input(format!("{SPARK_TOKEN_ENV} holds characters that cannot go into an HTTP header"))
            })?;
            req.metadata_mut().insert("authorization", v);
        }
        Ok(req)
    }

    async fn unary<Q, R>(&mut self, method: &'static str, msg: Q, what: &str, limit: Duration) -> Result<R>
    where
        Q: prost::Message + Send + Sync + 'static,
        R: prost::Message + Default + Send + Sync + 'static,
    {
        let req = self.request(msg)?;
        let server = self.server.clone();
        let call = async {
            self.grpc
                .ready()
                .await
                .map_err(|e| Error::Input(format!("cannot connect to {}: {e}", Database::Spark(server.clone()))))?;
            let codec = tonic_prost::ProstCodec::<Q, R>::default();
            self.grpc
                .unary(req, PathAndQuery::from_static(method), codec)
                .await
                .map(|r| r.into_inner())
                .map_err(|s| call_error(&server, what, &s))
        };
        match tokio::time::timeout(limit, call).await {
            Ok(r) => r,
            Err(_) => Err(Error::Input(format!(
                "{} did not answer the {what} in {:.0} s (is it a Spark Connect server?)",
                Database::Spark(server),
                limit.as_secs_f64()
            ))),
        }
    }

    async fn configure(&mut self, limit: Duration) -> Result<()> {
        let msg = ConfigRequest {
            session_id: self.id.clone(),
            user_context: self.user(),
            operation: Some(ConfigOperation {
                set: Some(ConfigSet {
                    pairs: SESSION_CONF
                        .iter()
                        .map(|(k, v)| KeyValue { key: k.to_string(), value: Some(v.to_string()) })
                        .collect(),
                }),
            }),
            client_type: Some(CLIENT_TYPE.into()),
        };
        let _: ConfigResponse = self.unary(CONFIG, msg, "session configuration", limit).await?;
        Ok(())
    }

    /// Start a plan; the stream of its responses.
    async fn execute(
        &mut self,
        rel: Relation,
        tag: &str,
        what: &str,
        limit: Duration,
    ) -> Result<tonic::Streaming<ExecutePlanResponse>> {
        let msg = ExecutePlanRequest {
            session_id: self.id.clone(),
            user_context: self.user(),
            plan: Some(Plan { root: Some(rel) }),
            client_type: Some(CLIENT_TYPE.into()),
            operation_id: Some(uuid()),
            tags: vec![tag.to_string()],
        };
        let req = self.request(msg)?;
        let server = self.server.clone();
        let call = async {
            self.grpc
                .ready()
                .await
                .map_err(|e| Error::Input(format!("cannot connect to {}: {e}", Database::Spark(server.clone()))))?;
            let codec = tonic_prost::ProstCodec::<ExecutePlanRequest, ExecutePlanResponse>::default();
            self.grpc
                .server_streaming(req, PathAndQuery::from_static(EXECUTE_PLAN), codec)
                .await
                .map(|r| r.into_inner())
                .map_err(|s| call_error(&server, what, &s))
        };
        match tokio::time::timeout(limit, call).await {
            Ok(r) => r,
            Err(_) => Err(Error::Db(format!("{what}: no answer in {:.0} s", limit.as_secs_f64()))),
        }
    }

    /// Run a catalog relation to its end; its rows.
    async fn catalog(&mut self, cat: Catalog, what: &str, limit: Duration) -> Result<Vec<Vec<SqlValue>>> {
        let tag = format!("lucy-{}", uuid());
        let rel = Relation { sql: None, catalog: Some(cat) };
        let mut stream = self.execute(rel, &tag, what, limit).await?;
        let mut out = Collector::new(Vec::new(), None, 64 << 20);
        let deadline = Instant::now() + limit;
        loop {
            let next = tokio::time::timeout_at(deadline.into(), stream.message()).await;
            match next {
                Err(_) => return Err(Error::Db(format!("{what}: no answer in {:.0} s", limit.as_secs_f64()))),
                Ok(Err(s)) => return Err(call_error(&self.server, what, &s)),
                Ok(Ok(None)) => break,
                Ok(Ok(Some(r))) => {
                    if let Some(b) = r.arrow_batch {
                        read_batch(&b.data, &mut out)?;
                    }
                }
            }
        }
        Ok(out.finish(false).rows)
    }

    async fn use_database(&mut self, db: &str, limit: Duration) -> Result<()> {
        let cat = Catalog {
            set_current_database: Some(SetCurrentDatabase { db_name: db.to_string() }),
            ..Catalog::default()
        };
        self.catalog(cat, &format!("switching to database `{db}`"), limit).await.map(drop)
    }

    /// The names of the server's databases.
    async fn databases(&mut self, limit: Duration) -> Result<Vec<String>> {
        let cat = Catalog { list_databases: Some(ListDatabases { pattern: None }), ..Catalog::default() };
        Ok(self.catalog(cat, "listing databases", limit).await?.iter().filter_map(|r| text(r.first())).collect())
    }

    /// The catalog's rows for the tables of `db`: name, catalog, namespace,
    /// description, tableType, isTemporary.
    async fn tables(&mut self, db: &str, limit: Duration) -> Result<Vec<Vec<SqlValue>>> {
        let cat = Catalog {
            list_tables: Some(ListTables { db_name: Some(db.to_string()), pattern: None }),
            ..Catalog::default()
        };
        self.catalog(cat, &format!("listing the tables of `{db}`"), limit).await
    }

    /// Interrupt every operation of this session tagged `tag` (best effort,
    /// bounded): whether the server reported an operation interrupted.
    async fn interrupt(&mut self, tag: &str) -> bool {
        let msg = InterruptRequest {
            session_id: self.id.clone(),
            user_context: self.user(),
            client_type: Some(CLIENT_TYPE.into()),
            interrupt_type: 2,
            operation_tag: Some(tag.to_string()),
        };
        let r: Result<InterruptResponse> = self.unary(INTERRUPT, msg, "interrupt", Duration::from_secs(5)).await;
        r.is_ok_and(|r| !r.interrupted_ids.is_empty())
    }

    /// Release the session on the server (best effort, bounded).
    async fn release(&mut self) {
        let msg = ReleaseSessionRequest {
            session_id: self.id.clone(),
            user_context: self.user(),
            client_type: Some(CLIENT_TYPE.into()),
        };
        let _: Result<ReleaseSessionResponse> =
            self.unary(RELEASE_SESSION, msg, "session release", Duration::from_secs(5)).await;
    }
}

/// Connect and open a session (a wrong URL, a stopped server or a refused
/// token fail here, exit 2).
pub fn connect(server: &SparkServer, timeout: Duration) -> Result<()> {
    let rt = runtime()?;
    rt.block_on(async {
        let mut s = Session::open(server, timeout).await?;
        let r = s.configure(timeout.min(SETUP_LIMIT)).await;
        s.release().await;
        r
    })
}

/// Spark SQL functions that run JVM code of the caller's choosing
/// (`reflect('java.lang.Thread', 'sleep', …)` and the like): refused here
/// whatever the guard admitted, as a `SELECT` can call them.
const JVM_FUNCTIONS: &[&str] = &["reflect", "java_method", "try_reflect"];

/// Refuse a call of one of [`JVM_FUNCTIONS`] anywhere in `sql` (a word,
/// quoted or not, followed by `(`; string literals are not words).
fn refuse_jvm_calls(sql: &str) -> Result<()> {
    use sqlparser::tokenizer::{Token, Tokenizer};
    let dialect = sqlparser::dialect::HiveDialect {};
    let tokens = Tokenizer::new(&dialect, sql)
        .tokenize()
        .map_err(|e| Error::Sql(format!("cannot read the SQL for Spark: {e}")))?;
    let mut prev: Option<String> = None;
    for t in tokens.iter().filter(|t| !matches!(t, Token::Whitespace(_))) {
        if matches!(t, Token::LParen) {
            if let Some(f) = prev.as_deref().filter(|f| JVM_FUNCTIONS.contains(&f.to_ascii_lowercase().as_str())) {
                return Err(Error::Sql(format!(
                    "the function {f}() runs Java code on the Spark server; lucy does not send it"
                )));
            }
        }
        prev = match t {
            Token::Word(w) => Some(w.value.clone()),
            Token::DoubleQuotedString(q) => Some(q.clone()),
            _ => None,
        };
    }
    Ok(())
}

pub fn run(server: &SparkServer, view: Option<ViewDef>, sql: &str, opts: &ExecOptions) -> Result<QueryRows> {
    let (final_sql, view_mode) = server_sql(view, sql);
    refuse_jvm_calls(&final_sql)?;
    // Only a query parses inside FROM ( ... ): Spark's own parser refuses
    // any statement that is not one. The LIMIT bounds what the server
    // computes and buffers (Spark Connect queues a result the client has
    // not read yet in the driver's memory): one row past the row limit, and
    // never more rows than the byte bound can hold (a row costs at least 4).
    let cap =
        opts.limit.unwrap_or(usize::MAX).min(opts.max_result_bytes / 4 + 1).saturating_add(1).min(i32::MAX as usize);
    let wrapped = format!("SELECT * FROM ({final_sql}\n) AS lucy_q LIMIT {cap}");
    let rt = runtime()?;
    let start = Instant::now();
    rt.block_on(async {
        let mut s = Session::open(server, opts.timeout).await?;
        let result = query(&mut s, &wrapped, opts, start).await;
        s.release().await;
        let mut rows = result?;
        rows.view_mode = view_mode.into();
        Ok(rows)
    })
}

async fn query(s: &mut Session, sql: &str, opts: &ExecOptions, start: Instant) -> Result<QueryRows> {
    let deadline = start + opts.timeout;
    let left = |now: Instant| deadline.saturating_duration_since(now).max(Duration::from_millis(1));
    s.configure(left(Instant::now()).min(SETUP_LIMIT)).await?;
    if !s.server.database.is_empty() {
        let db = s.server.database.clone();
        s.use_database(&db, left(Instant::now()).min(SETUP_LIMIT)).await?;
    }
    let tag = format!("lucy-{}", uuid());
    let rel = Relation { sql: Some(Sql { query: sql.to_string() }), catalog: None };
    let timed_out = |confirmed: bool| {
        Error::Db(format!(
            "query stopped after the {:.0} s time limit ({})",
            opts.timeout.as_secs_f64(),
            if confirmed {
                "interrupted on the server"
            } else {
                "the server did not confirm the interrupt; it may finish the work"
            }
        ))
    };
    let stream =
        tokio::time::timeout_at(deadline.into(), s.execute(rel, &tag, "the query", left(Instant::now()))).await;
    let mut stream = match stream {
        Ok(r) => r?,
        Err(_) => {
            let confirmed = s.interrupt(&tag).await;
            return Err(timed_out(confirmed));
        }
    };
    let mut out: Option<Collector> = None;
    let mut more = false;
    loop {
        let next = tokio::time::timeout_at(deadline.into(), stream.message()).await;
        let msg = match next {
            Err(_) => {
                drop(stream);
                let confirmed = s.interrupt(&tag).await;
                return Err(timed_out(confirmed));
            }
            Ok(Err(st)) => return Err(call_error(&s.server, "the query", &st)),
            Ok(Ok(None)) => break,
            Ok(Ok(Some(m))) => m,
        };
        let Some(batch) = msg.arrow_batch else { continue };
        let c = out.get_or_insert_with(|| Collector::new(Vec::new(), opts.limit, opts.max_result_bytes));
        if c.full() {
            more |= batch.row_count > 0;
            if more {
                break;
            }
            continue;
        }
        more |= read_batch(&batch.data, c)?;
        if more {
            break;
        }
    }
    if more {
        // The result was cut: stop the server's work too.
        drop(stream);
        s.interrupt(&tag).await;
    }
    let c = out.unwrap_or_else(|| Collector::new(Vec::new(), opts.limit, opts.max_result_bytes));
    Ok(c.finish(more))
}

/// Read one Arrow IPC stream (Spark sends one per batch: schema, then
/// record batches) into `out`; true when the bounds cut it (rows left).
fn read_batch(data: &[u8], out: &mut Collector) -> Result<bool> {
    let reader = arrow_ipc::reader::StreamReader::try_new(Cursor::new(data), None)
        .map_err(|e| Error::Db(format!("cannot read the Arrow result batch from Spark: {e}")))?;
    let schema = reader.schema();
    out.set_columns(schema.fields().iter().map(|f| f.name().clone()).collect());
    for batch in reader {
        let batch = batch.map_err(|e| Error::Db(format!("cannot read the Arrow result batch from Spark: {e}")))?;
        if read_rows(&batch, out)? {
            return Ok(true);
        }
    }
    Ok(false)
}

fn read_rows(batch: &RecordBatch, out: &mut Collector) -> Result<bool> {
    let cols = batch.columns();
    let fields = batch.schema();
    for row in 0..batch.num_rows() {
        if out.full() {
            return Ok(true);
        }
        let mut vals = Vec::with_capacity(cols.len());
        for (i, col) in cols.iter().enumerate() {
            let v = cell(col.as_ref(), row, out).map_err(|ty| {
                Error::Db(format!(
                    "column `{}` has the Spark/Arrow type {ty}, which lucy does not read; cast it to STRING in the query",
                    fields.field(i).name()
                ))
            })?;
            vals.push(v);
        }
        out.push(vals);
    }
    Ok(false)
}

/// One cell as a [`SqlValue`]; `Err(type)` for a type lucy does not read.
fn cell(a: &dyn Array, i: usize, out: &mut Collector) -> std::result::Result<SqlValue, String> {
    if a.is_null(i) {
        return Ok(SqlValue::Null);
    }
    let int = |v: i64| SqlValue::Integer(v);
    Ok(match a.data_type() {
        DataType::Null => SqlValue::Null,
        DataType::Boolean => int(i64::from(a.as_boolean().value(i))),
        DataType::Int8 => int(a.as_primitive::<Int8Type>().value(i).into()),
        DataType::Int16 => int(a.as_primitive::<Int16Type>().value(i).into()),
        DataType::Int32 => int(a.as_primitive::<Int32Type>().value(i).into()),
        DataType::Int64 => int(a.as_primitive::<Int64Type>().value(i)),
        DataType::UInt8 => int(a.as_primitive::<UInt8Type>().value(i).into()),
        DataType::UInt16 => int(a.as_primitive::<UInt16Type>().value(i).into()),
        DataType::UInt32 => int(a.as_primitive::<UInt32Type>().value(i).into()),
        DataType::UInt64 => {
            let v = a.as_primitive::<UInt64Type>().value(i);
            i64::try_from(v).map(SqlValue::Integer).unwrap_or(SqlValue::Real(v as f64))
        }
        DataType::Float16 => SqlValue::Real(a.as_primitive::<Float16Type>().value(i).to_f64()),
        DataType::Float32 => SqlValue::Real(a.as_primitive::<Float32Type>().value(i).into()),
        DataType::Float64 => SqlValue::Real(a.as_primitive::<Float64Type>().value(i)),
        DataType::Decimal128(_, scale) => {
            decimal(a.as_primitive::<arrow_array::types::Decimal128Type>().value(i), *scale)
        }
        DataType::Utf8 => out.text(a.as_string::<i32>().value(i)),
        DataType::LargeUtf8 => out.text(a.as_string::<i64>().value(i)),
        DataType::Utf8View => out.text(a.as_string_view().value(i)),
        DataType::Binary => out.blob(a.as_binary::<i32>().value(i)),
        DataType::LargeBinary => out.blob(a.as_binary::<i64>().value(i)),
        DataType::BinaryView => out.blob(a.as_binary_view().value(i)),
        DataType::Date32 => SqlValue::Text(date(a.as_primitive::<Date32Type>().value(i).into())),
        DataType::Date64 => SqlValue::Text(date(a.as_primitive::<Date64Type>().value(i).div_euclid(86_400_000))),
        DataType::List(_) | DataType::LargeList(_) => {
            let items = match a.data_type() {
                DataType::List(_) => a.as_list::<i32>().value(i),
                _ => a.as_list::<i64>().value(i),
            };
            // Elements are read apart; the whole list is one cell of `out`.
            let mut scratch = Collector::new(Vec::new(), None, out.cell_budget().max(64) * 4);
            let mut parts = Vec::with_capacity(items.len());
            for k in 0..items.len() {
                parts.push(match cell(items.as_ref(), k, &mut scratch)? {
                    SqlValue::Null => "NULL".to_string(),
                    SqlValue::Integer(n) => n.to_string(),
                    SqlValue::Real(x) => x.to_string(),
                    SqlValue::Text(t) => t,
                    SqlValue::Blob(b) => b.iter().map(|x| format!("{x:02x}")).collect(),
                });
            }
            out.text(&format!("[{}]", parts.join(", ")))
        }
        DataType::Timestamp(unit, _) => {
            let us = match unit {
                TimeUnit::Second => a.as_primitive::<TimestampSecondType>().value(i).saturating_mul(1_000_000),
                TimeUnit::Millisecond => a.as_primitive::<TimestampMillisecondType>().value(i).saturating_mul(1000),
                TimeUnit::Microsecond => a.as_primitive::<TimestampMicrosecondType>().value(i),
                TimeUnit::Nanosecond => a.as_primitive::<TimestampNanosecondType>().value(i) / 1000,
            };
            SqlValue::Text(timestamp(us))
        }
        other => return Err(other.to_string()),
    })
}

/// A decimal: whole values become integers, the rest reals (as SQLite's
/// arithmetic would give, and as the PostgreSQL and MySQL backends do).
fn decimal(v: i128, scale: i8) -> SqlValue {
    if scale <= 0 {
        let whole = v.checked_mul(10i128.pow(u32::from(scale.unsigned_abs())));
        return match whole.and_then(|w| i64::try_from(w).ok()) {
            Some(w) => SqlValue::Integer(w),
            None => SqlValue::Real(v as f64 * 10f64.powi(-i32::from(scale))),
        };
    }
    let p = 10i128.pow(u32::from(scale.unsigned_abs()));
    if v % p == 0 {
        if let Ok(w) = i64::try_from(v / p) {
            return SqlValue::Integer(w);
        }
    }
    let sign = if v < 0 { "-" } else { "" };
    let (w, f) = (v.unsigned_abs() / p.unsigned_abs(), v.unsigned_abs() % p.unsigned_abs());
    format!("{sign}{w}.{f:0width$}", width = scale as usize)
        .parse()
        .map(SqlValue::Real)
        .unwrap_or(SqlValue::Real(v as f64 / p as f64))
}

/// Days since 1970-01-01 → `YYYY-MM-DD`.
fn date(days: i64) -> String {
    let (y, m, d) = civil(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Microseconds since 1970-01-01 00:00 → `YYYY-MM-DD HH:MM:SS[.ffffff]`.
fn timestamp(us: i64) -> String {
    let day = us.div_euclid(86_400_000_000);
    format!("{} {}", date(day), time_of_day(us.rem_euclid(86_400_000_000)))
}

/// Every table and view the server's catalog lists, as `database.table
/// (type)`, sorted: for checking that nothing was created or dropped.
pub fn list_tables(server: &SparkServer, timeout: Duration) -> Result<Vec<String>> {
    let rt = runtime()?;
    rt.block_on(async {
        let mut s = Session::open(server, timeout).await?;
        let r = async {
            let mut names = s.databases(timeout).await?;
            names.push("global_temp".into());
            let mut out = Vec::new();
            for db in names {
                let rows = s.tables(&db, timeout).await?;
                out.push(format!("{db} (database)"));
                for r in rows {
                    let cell = |i: usize| match r.get(i) {
                        Some(SqlValue::Text(t)) => t.clone(),
                        Some(SqlValue::Integer(n)) => n.to_string(),
                        _ => String::new(),
                    };
                    // name, catalog, namespace, description, tableType, isTemporary
                    out.push(format!("{db}.{} ({}, temporary {})", cell(0), cell(4), cell(5)));
                }
            }
            out.sort();
            Ok(out)
        }
        .await;
        s.release().await;
        r
    })
}

/// The names of the server's databases (Spark Connect's catalog relation).
pub fn databases(server: &SparkServer, timeout: Duration) -> Result<Vec<String>> {
    let rt = runtime()?;
    rt.block_on(async {
        let mut s = Session::open(server, timeout).await?;
        let r = s.databases(timeout).await;
        s.release().await;
        r
    })
}

/// The permanent tables of database `db` with their columns, in the
/// catalog's order (Spark Connect's `listTables` and `listColumns`: catalog
/// relations, no SQL; views and temporary tables are left out). Bounded by
/// `timeout` per catalog call.
pub fn catalog_tables(server: &SparkServer, db: &str, timeout: Duration) -> Result<Vec<CatalogTable>> {
    let rt = runtime()?;
    rt.block_on(async {
        let mut s = Session::open(server, timeout).await?;
        let r = async {
            let rows = s.tables(db, timeout).await?;
            let mut out = Vec::new();
            // name, catalog, namespace, description, tableType, isTemporary
            for r in rows {
                let (Some(name), kind) = (text(r.first()), text(r.get(4)).unwrap_or_default()) else { continue };
                if kind.eq_ignore_ascii_case("VIEW") || matches!(r.get(5), Some(SqlValue::Integer(1))) {
                    continue;
                }
                let cols = s
                    .catalog(
                        Catalog {
                            list_columns: Some(ListColumns { table_name: name.clone(), db_name: Some(db.to_string()) }),
                            ..Catalog::default()
                        },
                        &format!("listing the columns of `{db}`.`{name}`"),
                        timeout,
                    )
                    .await?;
                // name, description, dataType, nullable, isPartition, isBucket, isCluster
                let columns = cols
                    .iter()
                    .filter_map(|c| {
                        Some(CatalogColumn {
                            name: text(c.first())?,
                            description: text(c.get(1)).filter(|d| !d.is_empty()),
                            sql_type: text(c.get(2)).unwrap_or_default(),
                            nullable: !matches!(c.get(3), Some(SqlValue::Integer(0))),
                        })
                    })
                    .collect();
                out.push(CatalogTable { name, description: text(r.get(3)).filter(|d| !d.is_empty()), columns });
            }
            Ok(out)
        }
        .await;
        s.release().await;
        r
    })
}

/// A text cell's value.
fn text(v: Option<&SqlValue>) -> Option<String> {
    match v {
        Some(SqlValue::Text(t)) => Some(t.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jvm_calls_are_refused_strings_are_not_calls() {
        for sql in [
            "SELECT reflect('java.lang.Thread', 'sleep', 1000L)",
            "SELECT x FROM t WHERE JAVA_METHOD ('a', 'b') IS NULL",
            "SELECT `try_reflect`('a', 'b')",
            "SELECT \"reflect\"('a', 'b')",
            "SELECT system.builtin.reflect('a', 'b')",
        ] {
            let e = refuse_jvm_calls(sql).unwrap_err().to_string();
            assert!(e.contains("runs Java code"), "{sql}: {e}");
        }
        for sql in ["SELECT 'reflect(' AS x", "SELECT reflect FROM t", "SELECT a.reflect, (1) FROM t a"] {
            refuse_jvm_calls(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
    }

    #[test]
    fn decimals_dates_and_ids() {
        assert_eq!(decimal(4200, 2), SqlValue::Integer(42));
        assert_eq!(decimal(-1250, 2), SqlValue::Real(-12.5));
        assert_eq!(decimal(5, 3), SqlValue::Real(0.005));
        assert_eq!(decimal(7, 0), SqlValue::Integer(7));
        assert_eq!(decimal(7, -2), SqlValue::Integer(700));
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(19_782), "2024-02-29");
        assert_eq!(timestamp(86_400_000_000 + 3_723_500_000), "1970-01-02 01:02:03.5");
        assert_eq!(timestamp(-1), "1969-12-31 23:59:59.999999");
        let (a, b) = (uuid(), uuid());
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"), "{a}");
    }

    #[test]
    fn arrow_batches_go_through_the_bounds() {
        use std::sync::Arc;
        let schema = Arc::new(arrow_schema::Schema::new(vec![
            arrow_schema::Field::new("n", DataType::Int64, true),
            arrow_schema::Field::new("s", DataType::Utf8, true),
        ]));
        let n: Vec<Option<i64>> = (0..100).map(|i| if i == 3 { None } else { Some(i) }).collect();
        let s: Vec<Option<String>> = (0..100).map(|i| Some("x".repeat(i))).collect();
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(arrow_array::Int64Array::from(n)), Arc::new(arrow_array::StringArray::from(s))],
        )
        .unwrap();
        let mut buf = Vec::new();
        {
            let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut buf, &schema).unwrap();
            w.write(&batch).unwrap();
            w.finish().unwrap();
        }
        let mut c = Collector::new(Vec::new(), Some(10), 1 << 20);
        assert!(read_batch(&buf, &mut c).unwrap(), "ten of a hundred rows: cut");
        let r = c.finish(true);
        assert_eq!(r.columns, vec!["n", "s"]);
        assert_eq!(r.rows.len(), 10);
        assert_eq!(r.rows[3], vec![SqlValue::Null, SqlValue::Text("xxx".into())]);
        assert!(r.truncation.unwrap().contains("row limit of 10"));
        let mut c = Collector::new(Vec::new(), None, 1000);
        assert!(read_batch(&buf, &mut c).unwrap(), "1000 bytes: cut");
        let r = c.finish(true);
        assert!(r.bytes <= 1000, "{}", r.bytes);
        assert!(r.truncation.unwrap().contains("--max-result-bytes 1000"));
        let mut c = Collector::new(Vec::new(), None, 1 << 20);
        assert!(!read_batch(&buf, &mut c).unwrap());
        assert_eq!(c.finish(false).rows.len(), 100);
        let e = read_batch(b"not arrow", &mut Collector::new(Vec::new(), None, 1000)).unwrap_err();
        assert!(e.to_string().contains("Arrow"), "{e}");
    }
}
