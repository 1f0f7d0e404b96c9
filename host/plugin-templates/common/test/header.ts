import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { extensionPoints, type PluginManifest } from '@agent-host/sdk';
import { startTestKernel, __SUITE_FN__ } from '@agent-host/sdk/testing';
import plugin from '__PACKAGE_NAME__';

// The manifest is checked as the host checks it: what init registers must be what "contributes" declares.
const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).agentHost as PluginManifest;
