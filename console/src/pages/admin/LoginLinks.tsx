// Sign-in links for the account's holder: issue one (its address shown this once, to copy and send),
// and the links issued before with whether each is still good. Their tokens are never listed: the
// gateway keeps only a hash.
import { useRef, useState } from 'preact/hooks';
import { CopyButton } from '../../components/CopyButton';
import { Failure } from '../../components/Notice';
import { formatTime } from '../../format';
import { useAction } from '../../use-action';
import { useLoad } from '../../use-load';
import { type Admin, accountPath, type LoginLink } from './admin-api';

function IssuedLink({ url, expiresAt }: { url: string; expiresAt: string }) {
  const field = useRef<HTMLInputElement>(null);
  return (
    <div class="secret" aria-live="polite">
      <h3>Sign-in link issued</h3>
      <p>Send it to the account’s holder: it signs in once, until {formatTime(expiresAt)}, and is not shown again.</p>
      <label for="issued-link">Sign-in link</label>
      <input id="issued-link" ref={field} readOnly value={url} />
      <CopyButton text={url} label="Copy the sign-in link" field={() => field.current} />
    </div>
  );
}

export function LoginLinks({ admin, id }: { admin: Admin; id: string }) {
  const { data, error, reload } = useLoad(() => admin.get<{ data: LoginLink[] }>(accountPath(id, '/login-links')), [id]);
  const [issued, setIssued] = useState<{ url: string; expires_at: string }>();
  const { failure, act } = useAction(reload);
  const issue = () => act(async () => setIssued(await admin.post<{ url: string; expires_at: string }>(accountPath(id, '/login-links'))));

  return (
    <section>
      <h2>Sign-in links</h2>
      <Failure message={failure ?? error} />
      <button type="button" onClick={issue}>
        Issue a sign-in link
      </button>
      {issued && <IssuedLink url={issued.url} expiresAt={issued.expires_at} />}
      {data && data.data.length === 0 && <p>No links issued (expired ones are swept away).</p>}
      {data && data.data.length > 0 && (
        <div class="table">
          <table>
            <caption>Sign-in links of this account</caption>
            <thead>
              <tr>
                <th scope="col">Issued</th>
                <th scope="col">Expires</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {data.data.map((link) => (
                <tr key={link.id}>
                  <td>{formatTime(link.created_at)}</td>
                  <td>{formatTime(link.expires_at)}</td>
                  <td>{link.state === 'used' ? `used ${formatTime(link.used_at)}` : link.state}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
