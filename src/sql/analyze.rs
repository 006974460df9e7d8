//! Tables, columns and join pairs referenced by a query (in progress).
