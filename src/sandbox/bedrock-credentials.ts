// The only credentials the sandbox's Bedrock accepts (the built-in catalogue's sandbox-bedrock channel
// has them): made up for the sandbox, opening nothing else.
export const SANDBOX_AWS_CREDENTIALS = Object.freeze({ accessKeyId: 'SANDBOXACCESSKEYID', secretAccessKey: 'sandbox-secret-access-key' });
