//! Where the fetched test inputs live (see `scripts/fetch-test-data`).
