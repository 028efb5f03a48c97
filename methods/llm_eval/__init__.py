"""A small evaluation harness for LLM benchmarks: batches of prompts through the gateway as jobs,
raw outputs stored in the database, and the statistics both MultiCogEval and EcoLevels report."""
