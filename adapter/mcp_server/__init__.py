"""`neural-debugger mcp`: the neural debugger as Model Context Protocol tools for coding agents.

An agent starts a session on a program and steps through it without running it (every stop is
predicted by the model), asks what one call returns (`predict_call`, CruxEval-O posing) or which
arguments lead to an output (`predict_inputs`, CruxEval-I posing), and checks a session against the
real recorder (`verify`, which runs the program in tracegen's sandbox). Modules:

results   the JSON shapes the tools answer with (pydantic), and a stop built from a `State`
sessions  the open debugging sessions: bounded in number, isolated, reaped when idle
calls     one call posed as a program: its predicted result, or the arguments behind an output
verify    a session's stops replayed under the real recorder, and the divergences
server    the MCP tools on the official SDK's `MCPServer`
cli       the `neural-debugger mcp` command (stdio, or Streamable HTTP on 127.0.0.1 with --http PORT)
"""
