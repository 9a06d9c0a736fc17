// Integration tests wait on a real broker: allow them minutes, not jest's 5 s default.
jest.setTimeout(180_000);
