// The sandbox's own Vertex AI service account: a key pair made for the sandbox alone and published
// here on purpose (it opens nothing but the sandbox). Its token endpoint signs nobody in but a JWT
// grant signed with this key, so a channel configured with another account is refused, as Google's
// would refuse it.

const PRIVATE_KEY = `-----BEGIN PRIVATE KEY-----
MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQDM1Swah0yVA2QI
wgzWw0xj7w0SyJDH12YFbJk9pTnSqtrVrtp2kouVq79hxqo9nwZYrchUizIgE52k
eeNfb2gys7E9N5FBflbd6qzQXza9p+6Qk7ZSJjiEHTS6bCRGILeMdcy/+DuoZlZM
n4KG5h3jwaoxtLy25Bs+hXSyvwZr+UvAU/crSIA8Fx/UK0BUWqsY4a30oviV3WIU
aoxgaFPtRR9RkIH2gQ5j37N6KXE2HEDZscWf4/UnCbmz+sXdpHjaKwp/Xu0zKlyW
ubj8beR4gd73JQbMFZ0+1MZQ8j8ms7mSxk6Lqd8XAg+8IFM57KHXtWr7WwuP6v/5
PMPr12p9AgMBAAECggEACa/CEm4YD8r1gdmFaGmbdPVi2aLM//pee36vf4QPCDim
uSi38ZgMDFOvLQVLWzcoQmzTdrYPdIdg8tyFxWdcFtu7E8FLN/zsyDlXG1KJYO4u
YL1vh5KBpTPJYNCI5Z0Z+QVAHcr0LUpLpft8HXuH6dOohAm/S+ndJPeENYjFmbj+
bqHb5VNTnoh5VbWwnEKWOn3xS5VAXrO7qdijti5PK7hhDrMjcAqFw7vt0RL0WXIk
ytwED4Czrdzfm4m3fCuris/6+5T8PSOiZrCMXhCLkZfZYwf83xFoobJN8KGXtB4M
gslQIMC9/u8V841ulcegAaBgsaWI7pwgzfAPGJ4mqQKBgQDwCXBGFE9dWTBHpZ+o
wZ8BMYfv7oZ06l4wY6uMcQVOfa0Wgz2zgddzwkBzXeE0IN4vtQyReX9/KW6s1FDa
iGpZ4zyqxneF30cHoVv/y27aII9N/ZS2nl4KV4en4JKhZ9rC9ljNRP/YjZVXhFPH
5IeU/dtrPDT02ISIRUuOwBeedQKBgQDadGR8BjUhKc6CQxHKqnGc+F9wS2jSD86L
CX8ACFSZWb3s1tCtsJJoyAPvuBtE1cOx8hbD+g41+EYJOdY7jCTFkk0SYd27xsvE
RwAXQ6FBzGaKC9l2z3ef3PX2xntiNuL9G9qQx2MngCVh/fz6afcwOX30l/TfdxyB
fFJtA9Uq6QKBgEI7KHp9siRcrqCmR3aF7jyjERIX64uo+1I4viXjLYap0K+MiOLV
6b/sEmKCvdfnVccuGoitUIuiwAH6F1ElIMsqkxu/5UzP/cZSNJNQ64ZOQ5xOYtE8
w0/xNOISagMVJ9xxorEI39s9vb5HKeLW4L4wiXF+TFJex7rd++oogJvdAoGBAK7r
G7qjTc9sJkrvYUOiDq7dwa2s9BWfSobR57si8HqJ/SWzLAynodP8tAoypMMNV1EY
w1nQ06grUAj7IqszoA4DA2uAqYc9utNC9rOqF2kUPdazfkFABk0fJGOgshMGV+LL
dssOnDp4xXYdZX8tchxPLKe5NP3p5g1YereHphxhAoGBAOiLV8fAm1SRVVQi1gl5
Yce4+3KDSllwfvH9XG8JhYLfjSfuULr4n3XR+YLDR3mv8p4yZ15Srn47agGtgs0N
L7S3nNdNM+hRItyMlWvwSRRA5JofMcT+VdFtomkZ2A5opAnDoGudSVXwvCbFcdzK
dBDXfGdQXSupDo+PWb/DZfM3
-----END PRIVATE KEY-----
`;

/** The public half, which the sandbox's token endpoint checks grants against. */
export const SANDBOX_SERVICE_ACCOUNT_PUBLIC_KEY = `-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAzNUsGodMlQNkCMIM1sNM
Y+8NEsiQx9dmBWyZPaU50qra1a7adpKLlau/YcaqPZ8GWK3IVIsyIBOdpHnjX29o
MrOxPTeRQX5W3eqs0F82vafukJO2UiY4hB00umwkRiC3jHXMv/g7qGZWTJ+ChuYd
48GqMbS8tuQbPoV0sr8Ga/lLwFP3K0iAPBcf1CtAVFqrGOGt9KL4ld1iFGqMYGhT
7UUfUZCB9oEOY9+zeilxNhxA2bHFn+P1Jwm5s/rF3aR42isKf17tMypclrm4/G3k
eIHe9yUGzBWdPtTGUPI/JrO5ksZOi6nfFwIPvCBTOeyh17Vq+1sLj+r/+TzD69dq
fQIDAQAB
-----END PUBLIC KEY-----
`;

export const SANDBOX_SERVICE_ACCOUNT_EMAIL = 'sandbox@sandbox-project.iam.gserviceaccount.com';

/** The account's key file, as a channel's `vertex.service_account_json` carries it, its tokens from `tokenUri`. */
export function sandboxServiceAccount(tokenUri: string) {
  return {
    type: 'service_account',
    project_id: 'sandbox-project',
    private_key_id: 'sandbox',
    private_key: PRIVATE_KEY,
    client_email: SANDBOX_SERVICE_ACCOUNT_EMAIL,
    token_uri: tokenUri,
  };
}
