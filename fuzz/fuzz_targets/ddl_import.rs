//! cargo-fuzz target `ddl_import`: see fuzz/props.rs for the property.
#![no_main]

#[path = "../props.rs"]
mod props;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    props::ddl(data);
});
