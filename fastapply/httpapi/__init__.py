"""The HTTP front-end: OpenAI chat completions and completions, Ollama's chat and generate, Relace's
apply endpoint, over any apply prompt of `formats.FAMILIES` (see app.py).

    formats.py     the prompt families as data (pure)        message.py   a prompt's blocks, read by structure (pure)
    prompt.py      a prompt -> its family and answer (pure)  escaping.py  HTML-escaped blocks (pure)
    parse.py       request bodies -> ApplyRequest (pure)     compaction.py  Morph SDK's large-file anchors (pure)
    shapes.py      OpenAI's and Relace's answers (pure)      ollama.py    Ollama's answers (pure)
    language.py    the language of a request naming none     usage.py     token usage
    cache.py       what is remembered by a text's digest     errors.py    error code -> HTTP status, OpenAI's shape
    paths.py       `//v1`, `/v1/v1` routed as `/v1`          pump.py      blocking event generators on the loop
    app.py         the FastAPI app                           server.py    uvicorn beside the gRPC server
"""
