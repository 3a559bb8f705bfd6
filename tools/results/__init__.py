"""A run's figures: result_log.py is the schema and parser of the log's
machine-readable lines, results.py turns a log into CSV and JSON (with
the model's figures), report.py, plot.py and model_table.py present them,
trace_extract.py rebuilds a CTF trace from a log; seeds_data.json holds
the seed papers' figures. Above model/."""
