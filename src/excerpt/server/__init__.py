"""HTTP: thin routes over the engine and the memory store (FastAPI, served by uvicorn)."""
