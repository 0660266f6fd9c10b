"""SaaS-SBC: multi-tenant voice platform orchestrating FreeSWITCH over the Event Socket."""
