#!/usr/bin/env node
// The `hopper` command. Its code is in ../dist (built from ../src by `npm run build`).
import { main } from '../dist/main.js';

process.exitCode = await main(process.argv.slice(2));
