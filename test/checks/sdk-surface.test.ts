import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';
import t from 'tap';

const sdkDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../sdk');

t.test('the public surface of @agent-host/sdk matches sdk/etc/sdk.api.md', async (t) => {
  const config = ExtractorConfig.loadFileAndPrepare(path.join(sdkDir, 'api-extractor.json'));
  const messages: string[] = [];
  const result = Extractor.invoke(config, {
    localBuild: false,
    messageCallback: (message) => {
      if (message.logLevel === 'error' || message.logLevel === 'warning') messages.push(message.formatMessageWithLocation(sdkDir));
      message.handled = true;
    },
  });
  t.equal(
    result.apiReportChanged,
    false,
    'the SDK API changed: if on purpose, run `npm run api-report -w @agent-host/sdk`, review sdk/etc/sdk.api.md, and bump the SDK version (major for a break)',
  );
  t.same(messages, [], 'no API Extractor errors or warnings');
  t.ok(result.succeeded, 'API Extractor succeeded');
});
