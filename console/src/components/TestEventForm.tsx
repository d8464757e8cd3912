// Settings → Webhook: sends a signed webhook.test event to a URL the holder types, as deliveries
// are sent, and shows what the receiver answered (or why it could not be reached).
import { useState } from 'preact/hooks';
import { api, messageOf, type TestEventResult } from '../api';
import { Failure } from './Notice';

export function TestEventForm() {
  const [url, setUrl] = useState('');
  const [sending, setSending] = useState(false);
  const [result, setResult] = useState<TestEventResult>();
  const [failure, setFailure] = useState<string>();

  const send = async (event: Event) => {
    event.preventDefault();
    setSending(true);
    setFailure(undefined);
    setResult(undefined);
    try {
      setResult(await api<TestEventResult>('POST', '/v1/account/webhook-secret/test', { url }));
    } catch (caught) {
      setFailure(messageOf(caught));
    } finally {
      setSending(false);
    }
  };

  return (
    <section>
      <h2>Send a test event</h2>
      <p>
        POSTs a signed <code>webhook.test</code> event to a URL, as task callbacks are sent, and shows the receiver’s answer.
      </p>
      <form class="inline" onSubmit={send}>
        <label for="test-event-url">Receiver URL</label>
        <input id="test-event-url" type="url" required placeholder="https://example.com/hooks" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        <button type="submit" disabled={sending}>
          {sending ? 'Sending…' : 'Send test event'}
        </button>
      </form>
      <Failure message={failure} />
      <div role="status">
        {result && (
          <div class="test-answer">
            {result.error !== undefined ? (
              <p>
                Not delivered: {result.error} (event <code>{result.event_id}</code>)
              </p>
            ) : (
              <>
                <p>
                  Receiver answered <strong>HTTP {result.status_code}</strong> in {result.response_ms} ms (event <code>{result.event_id}</code>, signed).
                </p>
                {result.body_excerpt ? <pre>{result.body_excerpt}</pre> : <p>The answer had no body.</p>}
              </>
            )}
          </div>
        )}
      </div>
    </section>
  );
}
