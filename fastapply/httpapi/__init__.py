"""The HTTP front-end: OpenAI chat completions in Morph's format, Relace's apply endpoint (see app.py).

    parse.py       request bodies -> ApplyRequest (pure)     message.py   Morph's message, read by structure (pure)
    compaction.py  Morph SDK's large-file anchors (pure)     language.py  the language of a request naming none
    shapes.py      answers and stream events (pure)          errors.py    error code -> HTTP status, OpenAI's shape
    usage.py       token usage                               paths.py     `//v1`, `/v1/v1` routed as `/v1`
    pump.py        blocking event generators on the loop     app.py       the FastAPI app
    server.py      uvicorn beside the gRPC server (`fastapply serve --http-port`)
"""
