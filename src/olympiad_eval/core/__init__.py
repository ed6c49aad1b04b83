"""What every room of the package uses: the records and their one JSONL form, where outputs are, the
run plan, config checks, statistics, table writers, prompt templates."""
