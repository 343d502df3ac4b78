"""Aframes' MCP door: the tools agents call, over streamable HTTP at /mcp and over stdio."""
