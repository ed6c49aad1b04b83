"""Talking to models: the request cache, the OpenAI-compatible transport, images, usage, and the providers."""
