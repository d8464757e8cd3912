// The reference page at /docs names the project, in its title, its tab icon and its top bar's
// mark, not the framework it is built with.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

describe('OpenAPI reference page', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(async () => {
    await gw.close();
  });

  test('/docs is titled "tollroute API reference" and shows tollroute’s icon and mark, not Swagger UI’s', async () => {
    const page = await request(`${gw.url}/docs`);
    const html = await page.body.text();
    assert.equal(page.statusCode, 200);
    assert.equal(/<title>([^<]*)<\/title>/.exec(html)?.[1], 'tollroute API reference');
    assert.doesNotMatch(html, /Swagger UI|favicon-32x32/);
    const icon = /<link rel="icon"[^>]*href="([^"]+)"/.exec(html)?.[1];
    const iconRes = await request(new URL(icon!, `${gw.url}/docs`));
    assert.equal(iconRes.statusCode, 200);
    assert.match(await iconRes.body.text(), /<svg[\s\S]*>tollroute<\/text>/);
    // The top bar's logo is swapped in by the page's initializer script.
    const initializer = await request(`${gw.url}/docs/static/swagger-initializer.js`);
    const script = await initializer.body.text();
    const logo = /img\.src = 'data:image\/svg\+xml;base64,([^']+)'/.exec(script)?.[1];
    assert.match(Buffer.from(logo!, 'base64').toString('utf8'), />tollroute<\/text>/);
  });
});
