fn main() {
    std::process::exit(secperf::cli::main());
}
