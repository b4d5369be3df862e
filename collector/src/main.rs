//! `llm-ux-collector`: see `llm-ux-collector --help` and the crate docs.

use clap::Parser;

#[tokio::main]
async fn main() {
    let args = llm_ux_collector::Args::parse();
    if let Err(e) = llm_ux_collector::run(args).await {
        eprintln!("llm-ux-collector: {e}");
        std::process::exit(1);
    }
}
