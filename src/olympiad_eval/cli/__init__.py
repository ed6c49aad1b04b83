"""Command-line tools beside `dvc repro`: the pipeline files, the cost plan, comparisons, recovery, a fake server."""
