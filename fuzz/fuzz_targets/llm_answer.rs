//! cargo-fuzz target `llm_answer`: see fuzz/props.rs for the property.
#![no_main]

#[path = "../props.rs"]
mod props;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    props::llm_answer(data);
});
