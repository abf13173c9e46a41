//! Deterministic generator of fake secrets, one or more per rule family.
//!
//! A template marks the secret with `«…»`; `{X:n}` draws `n` random characters of class `X`:
//! `A` alphanumeric, `a` lower alnum, `h` lower hex, `H` hex both cases, `U` AWS base32
//! (`A-Z2-7`), `B` bech32, `d` digits, `u` url-safe, `b` base64 body, `L` letters.

/// A planted secret: the text that carries it, the secret, and the rule that must name it.
#[derive(Debug, Clone)]
pub(crate) struct Sample {
    pub(crate) rule: &'static str,
    pub(crate) text: String,
    pub(crate) secret: String,
}

/// SplitMix64: small, deterministic, good enough for test data.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn draw(&mut self, class: char, n: usize) -> String {
        let set: &[u8] = match class {
            'A' => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
            'a' => b"abcdefghijklmnopqrstuvwxyz0123456789",
            'h' => b"0123456789abcdef",
            'H' => b"0123456789abcdefABCDEF",
            'U' => b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
            'd' => b"0123456789",
            'u' => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-",
            'b' => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
            'L' => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
            'B' => b"QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
            _ => panic!("unknown class {class}"),
        };
        loop {
            let s: String = (0..n).map(|_| set[self.below(set.len())] as char).collect();
            // Keep draws clear of the placeholder filters (`xxxxxx` runs, one char ≥ 50 %).
            if n < 8 || (!s.contains("xxxxxx") && !s.contains("XXXXXX")) {
                return s;
            }
        }
    }
}

/// Expands a template: returns (text, secret).
pub(crate) fn expand(rng: &mut Rng, t: &str) -> (String, String) {
    let (mut text, mut secret) = (String::new(), String::new());
    let mut in_secret = false;
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        let spec = c == '{' && {
            let rest: String = chars.clone().take(8).collect();
            let b = rest.as_bytes();
            b.len() > 2 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2].is_ascii_digit()
        };
        let piece = match c {
            '«' => {
                in_secret = true;
                continue;
            }
            '»' => {
                in_secret = false;
                continue;
            }
            '{' if spec => {
                let spec: String = chars.by_ref().take_while(|&c| c != '}').collect();
                let (class, n) = spec.split_once(':').expect("{X:n}");
                rng.draw(
                    class.chars().next().expect("class"),
                    n.parse().expect("count"),
                )
            }
            c => c.to_string(),
        };
        if in_secret {
            secret.push_str(&piece);
        }
        text.push_str(&piece);
    }
    (text, secret)
}

/// (rule id, templates). At least one template per built-in rule.
pub(crate) const TEMPLATES: &[(&str, &[&str])] = &[
    (
        "anthropic-api-key",
        &[
            "export ANTHROPIC_API_KEY=«sk-ant-api03-{u:93}AA»",
            "key: «sk-ant-api03-{u:93}AA» (truncated",
        ],
    ),
    ("anthropic-admin-key", &["«sk-ant-admin01-{u:93}AA»"]),
    (
        "anthropic-oauth-token",
        &[
            "{\"accessToken\":\"«sk-ant-oat01-{u:95}»\",\"expiresAt\":1}",
            "refresh «sk-ant-ort01-{u:95}»",
        ],
    ),
    ("anthropic-key", &["«sk-ant-sid02-{u:90}»"]),
    (
        "openai-api-key",
        &[
            "OPENAI_API_KEY=«sk-proj-{u:74}T3BlbkFJ{u:74}»",
            "«sk-{A:20}T3BlbkFJ{A:20}»",
            "old «sk-proj-{u:40}» cut",
        ],
    ),
    ("openrouter-api-key", &["«sk-or-v1-{h:64}»"]),
    ("groq-api-key", &["GROQ_API_KEY=«gsk_{A:52}»"]),
    (
        "github-token",
        &[
            "git clone https://«ghp_{A:36}»@github.com/o/r",
            "«gho_{A:36}»",
            "token «ghs_{A:36}».",
        ],
    ),
    ("github-fine-grained-pat", &["«github_pat_{A:22}_{A:59}»"]),
    (
        "slack-token",
        &[
            "SLACK_BOT_TOKEN=«xoxb-{d:12}-{d:13}-{A:24}»",
            "«xoxp-{d:11}-{d:11}-{d:12}-{h:32}»",
        ],
    ),
    ("slack-app-token", &["«xapp-1-A{U:10}-{d:13}-{h:64}»"]),
    (
        "slack-webhook",
        &["curl -X POST https://hooks.slack.com/«services/T{U:8}/B{U:10}/{A:24}»"],
    ),
    (
        "discord-webhook",
        &["https://discord.com/api/webhooks/{d:18}/«{u:68}»"],
    ),
    (
        "teams-webhook",
        &[
            "https://acme.webhook.office.com/webhookb2/«{h:8}-{h:4}-{h:4}-{h:4}-{h:12}@{h:8}/IncomingWebhook/{h:32}/{h:8}-{h:4}-{h:4}-{h:4}-{h:12}»",
        ],
    ),
    (
        "stripe-secret-key",
        &["stripe.api_key = '«sk_live_{A:24}»'", "«rk_test_{A:99}»"],
    ),
    (
        "stripe-webhook-secret",
        &["STRIPE_WEBHOOK_SECRET=«whsec_{A:32}»"],
    ),
    (
        "google-api-key",
        &["apiKey: \"«AIza{u:35}»\",", "?key=«AIza{u:35}»&q=1"],
    ),
    (
        "google-oauth-client-secret",
        &["\"client_secret\":\"«GOCSPX-{u:28}»\""],
    ),
    ("google-oauth-access-token", &["«ya29.a0{u:120}»"]),
    (
        "google-oauth-refresh-token",
        &["refresh_token=«1//0{u:100}»"],
    ),
    (
        "gcp-private-key-id",
        &["{\"type\": \"service_account\", \"private_key_id\": \"«{h:40}»\"}"],
    ),
    (
        "private-key",
        &[
            "«-----BEGIN RSA PRIVATE KEY-----\nMIIEow{b:58}\n{b:64}\n{b:64}\n{b:20}==\n-----END RSA PRIVATE KEY-----»\n",
            "cat id_ed25519\n«-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl{b:60}\n{b:64}\n{b:40}»\n... (truncated)",
            "{\"private_key\": \"«-----BEGIN PRIVATE KEY-----\\nMIIEvg{b:58}\\n{b:64}\\n-----END PRIVATE KEY-----»\\n\"}",
        ],
    ),
    (
        "putty-private-key",
        &[
            "PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nPublic-Lines: 2\n{b:64}\n{b:20}\n«Private-Lines: 2\n{b:64}\n{b:40}\nPrivate-MAC: {h:64}»\n",
        ],
    ),
    (
        "jwt",
        &[
            "Authorization: Bearer «eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ{u:60}.{u:43}»",
            "SUPABASE_SERVICE_ROLE=«eyJhbGciOiJIUzI1NiJ9.eyJ{u:120}.{u:43}»",
        ],
    ),
    ("onepassword-service-token", &["OP_TOKEN «ops_eyJ{u:300}»"]),
    ("supabase-token", &["«sbp_{h:40}»"]),
    ("supabase-secret-key", &["«sb_secret_{u:32}»"]),
    (
        "npm-token",
        &["//registry.npmjs.org/:_authToken=«npm_{A:36}»"],
    ),
    ("pypi-token", &["password = «pypi-AgEIcHlwaS5vcmc{u:150}»"]),
    (
        "docker-hub-token",
        &["docker login -u me -p «dckr_pat_{u:27}»"],
    ),
    ("digitalocean-token", &["«dop_v1_{h:64}»"]),
    ("shopify-token", &["«shpat_{h:32}»"]),
    (
        "age-secret-key",
        &["# created: 2024\n«AGE-SECRET-KEY-1{B:58}»"],
    ),
    ("linear-api-key", &["«lin_api_{A:40}»"]),
    ("notion-token", &["«ntn_{d:11}{A:35}»"]),
    ("postman-api-key", &["«PMAK-{h:24}-{h:34}»"]),
    ("grafana-token", &["«glsa_{A:32}_{h:8}»", "«glc_{b:80}»"]),
    ("doppler-token", &["«dp.pt.{A:43}»", "«dp.st.dev.{A:40}»"]),
    ("pulumi-token", &["«pul-{h:40}»"]),
    ("atlassian-api-token", &["«ATATT3xFfGF0{u:180}»"]),
    ("heroku-api-key", &["«HRKU-AA{u:58}»"]),
    ("newrelic-api-key", &["«NRAK-{U:27}»"]),
    ("sentry-token", &["«sntrys_eyJ{u:120}»", "«sntryu_{h:64}»"]),
    ("xai-api-key", &["«xai-{A:80}»"]),
    ("perplexity-api-key", &["«pplx-{A:48}»"]),
    ("replicate-api-token", &["«r8_{A:37}»"]),
    ("huggingface-token", &["HF_TOKEN=«hf_{L:34}»"]),
    (
        "aws-access-key-id",
        &[
            "aws_access_key_id = «AKIA{U:16}»",
            "AccessKeyId: «ASIA{U:16}»",
        ],
    ),
    (
        "aws-secret-access-key",
        &[
            "aws_secret_access_key = «Q{b:39}»",
            "\"SecretAccessKey\": \"«Q{b:39}»\"",
        ],
    ),
    (
        "aws-session-token",
        &["AWS_SESSION_TOKEN=«IQoJb3JpZ2luX2Vj{b:300}»"],
    ),
    ("gitlab-token", &["«glpat-{u:20}»", "«glrt-{u:26}»"]),
    ("vault-token", &["VAULT_TOKEN=«hvs.{u:90}»"]),
    ("terraform-cloud-token", &["«{A:14}.atlasv1.{u:67}»"]),
    (
        "azure-storage-key",
        &[
            "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=«{b:86}==»;EndpointSuffix=core.windows.net",
        ],
    ),
    (
        "azure-sas-signature",
        &["https://x.blob.core.windows.net/c/b?sv=2022-11-02&se=2024&sig=«{A:43}%3D»"],
    ),
    (
        "azure-ad-client-secret",
        &["client secret «{A:3}8Q~{u:34}»"],
    ),
    (
        "database-url-password",
        &[
            "DATABASE_URL=postgres://app:«{A:19}7»@db.internal:5432/app",
            "mongodb+srv://admin:«{A:15}7»@cluster0.x.mongodb.net/db",
        ],
    ),
    (
        "url-password",
        &["git remote add origin https://bob:«{A:17}7»@git.example.org/r.git"],
    ),
    (
        "http-auth-header",
        &["curl -H 'Authorization: Basic «Q{b:31}»' https://x"],
    ),
    (
        "bearer-token",
        &["# then call it with Bearer «{A:39}7» for the api"],
    ),
    ("cli-basic-auth", &["curl -u admin:«{A:15}7» https://x/api"]),
    ("telegram-bot-token", &["«{d:10}:AA{u:33}»"]),
    ("sendgrid-api-key", &["«SG.{u:22}.{u:43}»"]),
    ("mailgun-api-key", &["MAILGUN domain=x.org «key-{h:32}»"]),
    ("mailchimp-api-key", &["MAILCHIMP_API_KEY=«{h:32}-us6»"]),
    ("resend-api-key", &["RESEND_API_KEY=«re_{A:8}_{A:24}»"]),
    ("databricks-token", &["«dapi{h:32}»"]),
    ("cloudflare-api-key", &["CLOUDFLARE_API_TOKEN=«Q{u:38}7»"]),
    (
        "generic-password",
        &[
            "DB_PASSWORD=«{A:15}7»",
            "  password: \"«{A:12}!#»\"",
            "mysql --password «{A:13}7»",
        ],
    ),
    (
        "generic-secret",
        &["CLIENT_SECRET=«{A:31}7»", "\"credentials\": \"«{A:23}7»\""],
    ),
    (
        "generic-token",
        &["export API_TOKEN=«{A:31}7»", "authToken: '«{A:27}7»'"],
    ),
    (
        "generic-api-key",
        &[
            "SERVICE_API_KEY=«{A:31}7»",
            "x-api-key: «{A:31}7»",
            "privateKey = \"«{A:39}7»\"",
        ],
    ),
    (
        "netrc-password",
        &["machine api.example.com\n  login bob\n  password «{A:13}7»\n"],
    ),
    (
        "xml-password",
        &["<server><id>x</id><password>«{A:13}7»</password></server>"],
    ),
    (
        "docker-config-auth",
        &["{\"auths\": {\"ghcr.io\": {\"auth\": \"«Q{b:39}»\"}}}"],
    ),
    (
        "kubernetes-secret",
        &["apiVersion: v1\ndata:\n  password: «{b:24}»\nkind: Secret\nmetadata:\n  name: db\n"],
    ),
    (
        "kubeconfig-client-key",
        &["users:\n- user:\n    client-key-data: «LS0tLS1CRUdJTi{b:120}»\n"],
    ),
    (
        "discord-bot-token",
        &["discord bot: client.run('«M{u:25}.{u:6}.{u:38}»')"],
    ),
    ("twilio-api-key", &["twilio key sid «SK{h:32}»"]),
    (
        "facebook-app-token",
        &["facebook app token: «{d:16}|{u:27}»"],
    ),
    // Added for gitleaks coverage.
    (
        "square-access-token",
        &[
            "curl -H 'Authorization: Bearer «EAAA{u:60}»' https://connect.squareup.com/v2",
            "SQUARE_TOKEN=«sq0atp-{u:22}»",
        ],
    ),
    ("square-oauth-secret", &["app secret «sq0csp-{u:43}»"]),
    (
        "braintree-access-token",
        &["BT_TOKEN=«access_token$production${a:16}${h:32}»"],
    ),
    (
        "mapbox-token",
        &["mapboxgl.accessToken = '«sk.eyJ1Ijoi{A:20}IiwiYSI6I{A:20}In0.{u:22}»';"],
    ),
    ("airtable-token", &["AIRTABLE_PAT=«pat{A:14}.{h:64}»"]),
    ("harness-token", &["x-api-key: «pat.{u:22}.{A:24}.{A:20}»"]),
    (
        "flyio-token",
        &[
            "FLY_API_TOKEN=«fo1_{u:43}»",
            "fly deploy -t 'FlyV1 «fm2_{b:120}»'",
        ],
    ),
    ("contentful-token", &["«CFPAT-{u:43}»"]),
    ("dynatrace-token", &["DT_API_TOKEN=«dt0c01.{U:24}.{U:64}»"]),
    (
        "planetscale-token",
        &["«pscale_tkn_{u:43}»", "mysql -p«pscale_pw_{u:43}»"],
    ),
    (
        "firebase-cloud-messaging-key",
        &[
            "curl -H 'Authorization: key=«AAAA{u:7}:APA91b{u:134}»' https://fcm.googleapis.com/fcm/send",
        ],
    ),
    (
        "onepassword-secret-key",
        &["«A3-{U:6}-{U:11}-{U:5}-{U:5}-{U:5}»"],
    ),
    ("artifactory-token", &["«AKCp{A:69}»", "«cmVmd{A:59}»"]),
    (
        "aws-bedrock-api-key",
        &["AWS_BEARER_TOKEN_BEDROCK=«ABSK{b:132}»"],
    ),
    ("clojars-token", &["«CLOJARS_{A:60}»"]),
    ("cloudflare-origin-ca-key", &["«v1.0-{h:24}-{h:146}»"]),
    ("duffel-token", &["«duffel_test_{u:43}»"]),
    ("easypost-token", &["«EZAK{A:54}»", "«EZTK{A:54}»"]),
    ("flutterwave-secret-key", &["«FLWSECK_TEST-{h:32}-X»"]),
    ("frameio-token", &["«fio-u-{u:64}»"]),
    ("intra42-client-secret", &["«s-s4t2ud-{h:64}»"]),
    ("maxmind-license-key", &["license_key: «{A:6}_{A:29}_mmk»"]),
    ("prefect-token", &["«pnu_{A:36}»"]),
    ("readme-token", &["«rdme_{a:70}»"]),
    ("rubygems-token", &["«rubygems_{h:48}»"]),
    ("scalingo-token", &["«tk-us-{u:48}»"]),
    ("sendinblue-api-key", &["«xkeysib-{h:64}-{A:16}»"]),
    ("shippo-token", &["«shippo_live_{h:40}»"]),
    ("sourcegraph-token", &["«sgp_{h:16}_{h:40}»"]),
    ("sonarqube-token", &["sonar.token=«squ_{h:40}»"]),
    ("typeform-token", &["«tfp_{u:59}»"]),
    ("defined-networking-token", &["«dnkey-{u:26}-{u:52}»"]),
    ("facebook-access-token", &["«EAAC{A:150}»"]),
    (
        "jwt-base64",
        &["JWT_B64=«ZXlKaGJHY2lPaUpJVXpJMU5pSjkuZXlK{A:80}»"],
    ),
    ("alibaba-access-key-id", &["«LTAI5t{A:14}»"]),
    ("clickhouse-api-secret", &["«4b1d{A:37}7»"]),
    ("adobe-client-secret", &["«p8e-{A:31}7»"]),
    ("infracost-token", &["«ico-{A:31}7»"]),
    ("octopus-deploy-api-key", &["«API-{U:25}7»"]),
    (
        "openshift-user-token",
        &["oc login --token=«sha256~{u:43}»"],
    ),
    ("settlemint-token", &["«sm_pat_{A:15}7»"]),
    (
        "authress-access-key",
        &["«sc_{a:12}.{a:5}.acc_{a:20}.{u:60}»"],
    ),
    (
        "gitlab-session-cookie",
        &["curl -b '_gitlab_session=«{a:31}7»' https://gitlab.acme.io"],
    ),
    (
        "sidekiq-secret",
        &["export BUNDLE_ENTERPRISE__CONTRIBSYS__COM=«{h:8}:{h:8}»"],
    ),
    (
        "nuget-config-password",
        &["<add key=\"ClearTextPassword\" value=\"«{A:15}7»\" />"],
    ),
    (
        "email",
        &[
            "Author: Jane Doe <«jane.doe@{a:8}.io»>",
            "git config user.email «{L:6}.{L:5}@gmail.com»",
        ],
    ),
];

/// One sample per template, with fresh random bodies.
pub(crate) fn samples(rng: &mut Rng) -> Vec<Sample> {
    TEMPLATES
        .iter()
        .flat_map(|(rule, ts)| ts.iter().map(move |t| (*rule, *t)))
        .map(|(rule, t)| {
            let (text, secret) = expand(rng, t);
            Sample { rule, text, secret }
        })
        .collect()
}
