package mcp

// RedactArguments is redactArguments, for the tests.
var RedactArguments = redactArguments
