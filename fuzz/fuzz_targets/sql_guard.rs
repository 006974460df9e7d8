//! cargo-fuzz target `sql_guard`: see fuzz/props.rs for the property.
#![no_main]

#[path = "../props.rs"]
mod props;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    props::sql_guard(data);
});
