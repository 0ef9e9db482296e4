"""The HTTP front-end: OpenAI chat completions in Morph's format, Relace's apply endpoint (see app.py).

    parse.py   request bodies -> ApplyRequest (pure)      shapes.py  answers and stream events (pure)
    errors.py  error code -> HTTP status, OpenAI's shape   usage.py   token usage
    pump.py    blocking event generators on the event loop app.py     the FastAPI app
    server.py  uvicorn beside the gRPC server (`fastapply serve --http-port`)
"""
