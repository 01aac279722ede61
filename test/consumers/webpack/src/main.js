// The application: test/consumers/shared/app.js, the same page for both bundlers, copied here as
// src/app.js by test/consumers/run.mjs (in its copy of the fixtures, outside the repository).
import './app.js';
