"""The hygiene suite (`python -m evals.hygiene`) and its generated labelled set."""
