"""Data exports: streamed CSV with every cell neutralised against spreadsheet formula injection."""
