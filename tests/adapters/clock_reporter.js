#!/usr/bin/env node
'use strict';
// An adapter that reports its process's wall clock (tests/adapter_run_test.cpp), as
// clock_reporter.py does with time.time(): "CLIENT Date.now()" appended to the file named by its
// first argument at init and at every acquire. It locks nothing: every acquire is `acquired`.
const fs = require('fs');
const readline = require('readline');

const out = process.argv[2];
let client = null;
const replies = {
  init: {type: 'init_ok', library: 'clock-reporter', version: '0', language: 'javascript',
         capabilities: {expires: true, owner_checked_release: true}},
  noop: {type: 'noop_ok'},
  acquire: {type: 'acquire_ok', outcome: 'acquired'},
  release: {type: 'release_ok', outcome: 'released'},
};
readline.createInterface({input: process.stdin}).on('line', (line) => {
  const request = JSON.parse(line);
  if (request.type === 'init' || request.type === 'acquire') {
    if (request.client !== undefined) client = request.client;
    fs.appendFileSync(out, `${client} ${Date.now()}\n`);
  }
  process.stdout.write(`${JSON.stringify({id: request.id, ...replies[request.type]})}\n`);
});
