fn main() {
    std::process::exit(lucy::cli::main());
}
