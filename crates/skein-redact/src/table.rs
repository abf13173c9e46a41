//! The built-in rules (redaction.md §2), as data.
//!
//! Every rule has literal anchors for the prefilter and either a regex, run in a window
//! around each anchor hit, or a custom matcher. An anchor written `^x` starts the secret: a
//! hit right after a letter, digit or `_` (not an escape) is dropped before any regex runs. Regexes name the secret `(?P<s>…)` and may use
//! boundary macros that also accept JSON escapes (`\n` before a token, an ANSI colour code):
//! `%L%`/`%R%` (token boundary), `%RD%` (right, `-` counts as token), `%LB%`/`%RB%`
//! (base64 context: `+ / -` and `=` on the right count as token). Patterns are written for
//! both the raw escaped line and the decoded string.
//!
//! Windows: `back` bytes before the anchor and `ahead` after it. A failed search scans the
//! whole window, so windows stay small (≤ 256 ahead); a match that reaches the window's end
//! is searched again without the limit, so long tokens are still found whole.

use crate::custom;
use crate::filters;
use crate::generic::{self, Class, Site};
use crate::named;

/// How much a family can be trusted: A and B are always on, C is the contextual tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub enum Tier {
    /// Self-identifying prefix tokens: almost no false positives.
    A,
    /// Shorter prefixes or simple context, with boundary, entropy and allowlist checks.
    B,
    /// Generic and contextual rules (`NAME=value`, config files); enabled by `Level::Strict`.
    C,
}

pub(crate) type CustomFn = fn(&mut Site<'_>, &mut Vec<(usize, usize)>);
pub(crate) type CheckFn = fn(&[u8]) -> bool;

pub(crate) enum Pattern {
    Regex {
        re: &'static str,
        back: usize,
        ahead: usize,
    },
    Custom(CustomFn),
}

/// A cheap literal test around the anchor, run before the pattern (ASCII case-insensitive).
#[derive(Clone, Copy)]
pub(crate) enum Guard {
    None,
    /// The text right before the anchor ends with this.
    Before(&'static str),
    /// The text right after the anchor starts with this.
    After(&'static str),
    /// The byte right after the anchor is a hex digit.
    HexAfter,
}

impl Guard {
    pub(crate) fn pass(self, hay: &[u8], s: usize, e: usize) -> bool {
        match self {
            Guard::None => true,
            Guard::Before(w) => {
                s >= w.len() && hay[s - w.len()..s].eq_ignore_ascii_case(w.as_bytes())
            }
            Guard::After(w) => {
                hay.len() - e >= w.len() && hay[e..e + w.len()].eq_ignore_ascii_case(w.as_bytes())
            }
            Guard::HexAfter => hay.get(e).is_some_and(u8::is_ascii_hexdigit),
        }
    }
}

pub(crate) struct Def {
    pub(crate) id: &'static str,
    pub(crate) tier: Tier,
    pub(crate) anchors: &'static [&'static str],
    pub(crate) pattern: Pattern,
    pub(crate) check: Option<CheckFn>,
    pub(crate) guard: Guard,
    pub(crate) about: &'static str,
}

impl Def {
    const fn g(self, guard: Guard) -> Def {
        Def { guard, ..self }
    }
}

pub(crate) fn expand(re: &str) -> String {
    const ESC: &str = r"\\[nrt]|\\u[0-9a-fA-F]{4}|\[[0-9;]{0,12}m";
    re.replace("%LB%", &format!("(?:^|[^0-9A-Za-z_+/-]|{ESC})"))
        .replace("%RB%", "(?:$|[^0-9A-Za-z_+/=-])")
        .replace("%RD%", "(?:$|[^0-9A-Za-z_-])")
        .replace("%L%", &format!("(?:^|[^0-9A-Za-z_]|{ESC})"))
        .replace("%R%", "(?:$|[^0-9A-Za-z_])")
}

#[expect(clippy::too_many_arguments, reason = "one row of the rule table")]
const fn rx(
    id: &'static str,
    tier: Tier,
    anchors: &'static [&'static str],
    re: &'static str,
    back: usize,
    ahead: usize,
    check: Option<CheckFn>,
    about: &'static str,
) -> Def {
    Def {
        id,
        tier,
        anchors,
        pattern: Pattern::Regex { re, back, ahead },
        check,
        guard: Guard::None,
        about,
    }
}

const fn cu(
    id: &'static str,
    tier: Tier,
    anchors: &'static [&'static str],
    f: CustomFn,
    about: &'static str,
) -> Def {
    Def {
        id,
        tier,
        anchors,
        pattern: Pattern::Custom(f),
        check: None,
        guard: Guard::None,
        about,
    }
}

const TOK: Option<CheckFn> = Some(filters::token);
const TOKD: Option<CheckFn> = Some(filters::token_with_digit);
const PW: Option<CheckFn> = Some(filters::password);

fn gen_password(site: &mut Site<'_>, o: &mut Vec<(usize, usize)>) {
    generic::assignment(Class::Password, site, o);
}
fn gen_secret(site: &mut Site<'_>, o: &mut Vec<(usize, usize)>) {
    generic::assignment(Class::Secret, site, o);
}
fn gen_token(site: &mut Site<'_>, o: &mut Vec<(usize, usize)>) {
    generic::assignment(Class::Token, site, o);
}
fn gen_api_key(site: &mut Site<'_>, o: &mut Vec<(usize, usize)>) {
    generic::assignment(Class::ApiKey, site, o);
}

use Tier::{A, B, C};

/// Order matters only for ties: when spans of two rules of the same tier overlap, the
/// earlier rule names the finding.
pub(crate) static BUILTIN: &[Def] = &[
    // ---- Tier A: self-identifying prefixes -------------------------------------------
    rx("anthropic-api-key", A, &["^sk-"], r"%L%(?P<s>sk-ant-api\d\d-[A-Za-z0-9_-]{20,})%RD%", 16, 160, TOK, "Anthropic API key"),
    rx("anthropic-admin-key", A, &["^sk-"], r"%L%(?P<s>sk-ant-admin\d\d-[A-Za-z0-9_-]{20,})%RD%", 16, 160, TOK, "Anthropic Admin API key"),
    rx("anthropic-oauth-token", A, &["^sk-"], r"%L%(?P<s>sk-ant-o[a-z]{2}\d\d-[A-Za-z0-9_-]{20,})%RD%", 16, 180, TOK, "Claude OAuth access/refresh token (.credentials.json)"),
    rx("anthropic-key", A, &["^sk-"], r"%L%(?P<s>sk-ant-[a-z]{2,8}\d\d-[A-Za-z0-9_-]{20,})%RD%", 16, 180, TOK, "Other `sk-ant-` keys"),
    rx("openai-api-key", A, &["T3BlbkFJ", "^sk-"], r"%L%(?P<s>sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20})%RD%", 220, 256, TOK, "OpenAI project, service-account, admin and legacy keys"),
    rx("openrouter-api-key", A, &["^sk-"], r"%L%(?P<s>sk-or-v1-[a-f0-9]{32,})%R%", 16, 100, TOK, "OpenRouter key"),
    rx("groq-api-key", A, &["^gsk"], r"%L%(?P<s>gsk_[A-Za-z0-9]{32,})%R%", 16, 80, TOK, "Groq key"),
    rx("github-token", A, &["^ghp_", "^gho_", "^ghu_", "^ghs_", "^ghr_"], r"%L%(?P<s>gh[pousr]_[A-Za-z0-9]{30,})%R%", 16, 256, TOK, "GitHub classic PAT, OAuth, user/server and refresh tokens"),
    rx("github-fine-grained-pat", A, &["^github_pat_"], r"%L%(?P<s>github_pat_[A-Za-z0-9_]{40,})%R%", 16, 120, TOK, "GitHub fine-grained PAT"),
    rx("slack-token", A, &["^xox"], r"%L%(?P<s>(?:xoxe\.)?xox[abeoprs]-[A-Za-z0-9-]{16,})%RD%", 16, 256, TOKD, "Slack bot/user/app/refresh tokens"),
    rx("slack-app-token", A, &["^xapp-"], r"%L%(?P<s>xapp-\d-[A-Za-z0-9-]{20,})%RD%", 16, 200, TOKD, "Slack app-level token"),
    rx("slack-webhook", A, &["hooks"], r"hooks\.slack\.com/(?P<s>(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,})", 2, 200, Some(filters::random_tail), "Slack incoming-webhook URL path").g(Guard::After(".slack.com/")),
    rx("discord-webhook", A, &["hooks"], r"discord(?:app)?\.com/api/webhooks/[0-9]{10,25}/(?P<s>[A-Za-z0-9_-]{40,})", 40, 160, TOK, "Discord webhook URL secret").g(Guard::Before("/api/web")),
    rx("teams-webhook", A, &["ookb2/"], r"webhook\.office\.com/webhookb2/(?P<s>[A-Za-z0-9@/_-]{30,})", 32, 256, Some(filters::random_tail), "Microsoft Teams webhook URL path").g(Guard::Before("webh")),
    rx("stripe-secret-key", A, &["k_live_", "k_test_"], r"%L%(?P<s>[sr]k_(?:live|test)_[A-Za-z0-9]{20,})%R%", 17, 256, TOK, "Stripe secret and restricted keys"),
    rx("stripe-webhook-secret", A, &["^whsec_"], r"%L%(?P<s>whsec_[A-Za-z0-9+/=]{24,})%RB%", 16, 120, TOK, "Stripe webhook signing secret"),
    rx("google-api-key", A, &["^AIza"], r"%L%(?P<s>AIza[A-Za-z0-9_-]{35})%RD%", 16, 45, TOK, "Google API key (Maps, Firebase, Gemini)"),
    rx("google-oauth-client-secret", A, &["^GOCSPX-"], r"%L%(?P<s>GOCSPX-[A-Za-z0-9_-]{20,})%RD%", 16, 80, TOK, "Google OAuth client secret"),
    rx("google-oauth-access-token", A, &["^ya29."], r"%L%(?P<s>ya29\.[A-Za-z0-9_.-]{30,})%RD%", 16, 256, TOKD, "Google OAuth access token"),
    rx("google-oauth-refresh-token", A, &["^1//0"], r"%L%(?P<s>1//0[A-Za-z0-9_-]{30,})%RD%", 16, 256, TOKD, "Google OAuth refresh token"),
    cu("gcp-private-key-id", A, &["_key"], named::gcp_key_id, "`private_key_id` of a GCP service-account JSON"),
    cu("private-key", A, &["PRIVATE KEY"], custom::pem, "PEM private keys (RSA/EC/DSA/OpenSSH/PKCS#8/encrypted/PGP), also without END line"),
    rx("putty-private-key", A, &["Private-Lines"], r"(?P<s>Private-Lines:[ \t]*\d+(?:\s|\\+[nrt]|[A-Za-z0-9+/=])+(?:-MAC:[ \t]*[0-9a-fA-F]+)?)", 2, 256, None, "PuTTY `.ppk` private part"),
    rx("jwt", A, &["^eyJ"], r"%L%(?P<s>eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.?[A-Za-z0-9_-]*)%RD%", 16, 256, Some(filters::jwt), "JSON Web Token (header.payload.signature)"),
    rx("onepassword-service-token", A, &["eyJ"], r"%L%(?P<s>ops_eyJ[A-Za-z0-9+/=_-]{50,})%RB%", 16, 256, TOK, "1Password service-account token").g(Guard::Before("ops_")),
    rx("supabase-token", A, &["^sbp_"], r"%L%(?P<s>sbp_[a-f0-9]{40})%R%", 16, 60, TOK, "Supabase personal access token"),
    rx("supabase-secret-key", A, &["ecret"], r"%L%(?P<s>sb_secret_[A-Za-z0-9_-]{20,})%RD%", 20, 120, TOK, "Supabase secret API key").g(Guard::Before("sb_s")),
    rx("npm-token", A, &["^npm_"], r"%L%(?P<s>npm_[A-Za-z0-9]{36})%R%", 16, 50, TOK, "npm access token"),
    rx("pypi-token", A, &["^pypi-AgE"], r"%L%(?P<s>pypi-AgE[A-Za-z0-9_-]{50,})%RD%", 16, 256, TOK, "PyPI / TestPyPI upload token"),
    rx("docker-hub-token", A, &["^dckr_"], r"%L%(?P<s>dckr_(?:pat|oat)_[A-Za-z0-9_-]{20,})%RD%", 16, 120, TOK, "Docker Hub personal/organisation access token"),
    rx("digitalocean-token", A, &["_v1_"], r"%L%(?P<s>do[opr]_v1_[a-f0-9]{64})%R%", 20, 80, TOK, "DigitalOcean PAT, OAuth and refresh tokens"),
    rx("shopify-token", A, &["^shp"], r"%L%(?P<s>shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})%R%", 16, 50, TOK, "Shopify access tokens and shared secret"),
    rx("age-secret-key", A, &["ECRET"], r"(?P<s>AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})", 8, 80, TOK, "age encryption secret key").g(Guard::Before("AGE-S")),
    rx("linear-api-key", A, &["^lin_api_"], r"%L%(?P<s>lin_api_[A-Za-z0-9]{40})%R%", 16, 60, TOK, "Linear API key"),
    rx("notion-token", A, &["^ntn_"], r"%L%(?P<s>ntn_[0-9]{11}[A-Za-z0-9]{35})%R%", 16, 60, TOK, "Notion integration token"),
    rx("postman-api-key", A, &["^PMAK-"], r"%L%(?P<s>PMAK-[a-f0-9]{24}-[a-f0-9]{34})%R%", 16, 80, TOK, "Postman API key"),
    rx("grafana-token", A, &["^glsa_", "^glc_"], r"%L%(?P<s>glsa_[A-Za-z0-9]{32}_[a-fA-F0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})%RB%", 16, 256, TOK, "Grafana service-account and Cloud tokens"),
    rx("doppler-token", A, &["^dp."], r"%L%(?P<s>dp\.(?:pt|st(?:\.[a-z0-9_-]{1,30})?)\.[A-Za-z0-9]{40,})%R%", 16, 120, TOK, "Doppler personal and service tokens"),
    rx("pulumi-token", A, &["^pul-"], r"%L%(?P<s>pul-[a-f0-9]{40})%R%", 16, 60, TOK, "Pulumi access token"),
    rx("atlassian-api-token", A, &["^ATATT3"], r"%L%(?P<s>ATATT3[A-Za-z0-9_=-]{100,})%RD%", 16, 256, TOK, "Atlassian API token"),
    rx("heroku-api-key", A, &["^HRKU-"], r"%L%(?P<s>HRKU-[A-Za-z0-9_-]{40,})%RD%", 16, 120, TOK, "Heroku API key (new format)"),
    rx("newrelic-api-key", A, &["^NRAK-"], r"%L%(?P<s>NRAK-[A-Z0-9]{27})%R%", 16, 40, TOK, "New Relic user API key"),
    rx("sentry-token", A, &["^sntry"], r"%L%(?P<s>sntrys_eyJ[A-Za-z0-9+/=_-]{50,}|sntryu_[a-f0-9]{64})%RB%", 16, 256, TOK, "Sentry organisation and user auth tokens"),
    // ---- Tier B: shorter prefixes and light context ------------------------------------
    rx("xai-api-key", B, &["^xai-"], r"%L%(?P<s>xai-[A-Za-z0-9]{70,})%R%", 16, 120, TOKD, "xAI API key"),
    rx("perplexity-api-key", B, &["^pplx-"], r"%L%(?P<s>pplx-[A-Za-z0-9]{40,})%R%", 16, 80, TOKD, "Perplexity API key"),
    rx("replicate-api-token", B, &["^r8_"], r"%L%(?P<s>r8_[A-Za-z0-9]{37})%R%", 16, 50, TOKD, "Replicate API token"),
    rx("huggingface-token", B, &["^hf_"], r"%L%(?P<s>hf_[A-Za-z]{34})%R%", 16, 50, Some(filters::letters_token), "Hugging Face access token"),
    rx("aws-access-key-id", B, &["^AKI", "^ASI", "^ABI"], r"%LB%(?P<s>(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})%RB%", 16, 30, Some(filters::aws), "AWS access key id"),
    cu("aws-secret-access-key", B, &["ecret", "ECRET"], named::aws_secret, "AWS secret access key next to its name"),
    cu("aws-session-token", B, &["oken", "OKEN"], named::aws_session, "AWS session token next to its name"),
    rx("gitlab-token", B, &["^glpat-", "^gldt-", "^glrt-"], r"%L%(?P<s>gl(?:pat|dt|rt|ptt|cbt)-[A-Za-z0-9_.-]{20,})%RD%", 16, 200, TOK, "GitLab personal, deploy, runner, trigger and CI job tokens"),
    rx("vault-token", B, &["^hvs.", "^hvb."], r"%L%(?P<s>hv[sb]\.[A-Za-z0-9_-]{24,})%RD%", 16, 256, TOKD, "HashiCorp Vault service/batch token"),
    rx("terraform-cloud-token", B, &[".atlasv1."], r"%L%(?P<s>[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,})%RD%", 32, 200, TOK, "Terraform Cloud / Enterprise API token"),
    rx("azure-storage-key", B, &["Key"], r"(?:AccountKey|SharedAccessKey)=(?P<s>[A-Za-z0-9+/]{40,}={0,2})", 16, 200, TOK, "Azure storage account / Service Bus key in a connection string").g(Guard::After("=")),
    rx("azure-sas-signature", B, &["sig="], r"[?&;]sig=(?P<s>[A-Za-z0-9%+/]{30,}(?:=|%3[dD]){0,2})", 2, 200, TOK, "Azure SAS token signature"),
    rx("azure-ad-client-secret", B, &["Q~"], r"(?:^|[^A-Za-z0-9_~.-]|\\[nrt])(?P<s>[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})(?:$|[^A-Za-z0-9_~.-])", 8, 40, TOKD, "Entra ID (Azure AD) client secret"),
    cu("database-url-password", B, &["://"], custom::db_url_password, "Password in a database/broker URL (postgres, mysql, mongodb, redis, amqp…)"),
    cu("url-password", B, &["://"], custom::url_password, "Password in any other URL (user:pass@host)"),
    rx("http-auth-header", B, &["uthoriz"], r#"(?i:authorization)\\*["']?[ \t]*[:=][ \t]*\\*["']?[ \t]*(?:(?i:bearer|basic|token|bot|digest|apikey)[ \t]+)?(?P<s>[A-Za-z0-9._~+/=-]{8,})(?:$|[^A-Za-z0-9._~+/=(-])"#, 8, 256, Some(filters::header_value), "Authorization header value").g(Guard::Before("a")),
    rx("bearer-token", B, &["earer "], r"(?:^|[^A-Za-z0-9_])(?i:bearer)[ \t]+(?P<s>[A-Za-z0-9._~+/-]{16,}=*)(?:$|[^A-Za-z0-9._~+/=(-])", 8, 256, Some(filters::header_value), "Bearer token").g(Guard::Before("b")),
    rx("cli-basic-auth", B, &[" -u ", "--user"], r#"(?:-u|--user)(?:[ \t]+|=)\\*["']?[^\s:"'\\@]{1,100}:(?P<s>[^\s"'\\]{3,200})"#, 2, 256, PW, "`curl -u` / `--user user:password`"),
    rx("telegram-bot-token", B, &[":AA"], r"%L%(?P<s>[0-9]{8,10}:AA[A-Za-z0-9_-]{33})%RD%", 28, 40, TOK, "Telegram bot token"),
    rx("sendgrid-api-key", B, &["^SG."], r"%L%(?P<s>SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})%RD%", 16, 80, TOK, "SendGrid API key"),
    rx("mailgun-api-key", B, &["key-"], r"(?i:mailgun)[^\n]{0,200}?(?P<s>key-[a-f0-9]{32})%R%", 220, 40, TOK, "Mailgun API key near the word mailgun").g(Guard::HexAfter),
    cu("mailchimp-api-key", B, &["_key", "_KEY", "Key"], named::mailchimp, "Mailchimp API key (`<32 hex>-usN`) assigned to a mailchimp name"),
    cu("resend-api-key", B, &["_key", "_KEY", "Key"], named::resend, "Resend API key assigned to a resend name"),
    rx("databricks-token", B, &["^dapi"], r"%L%(?P<s>dapi[a-f0-9]{32}(?:-[0-9])?)%R%", 16, 40, TOK, "Databricks personal access token"),
    cu("cloudflare-api-key", B, &["oken", "OKEN", "_key", "_KEY", "Key"], named::cloudflare, "Cloudflare API token / global key assigned to a cloudflare/CF name"),
    // ---- Tier C: generic and contextual ------------------------------------------------
    cu("netrc-password", C, &["assw"], custom::netrc, "`.netrc` machine / login / password"),
    rx("xml-password", C, &["assw", "ASSW"], r"<(?i:password|passwd)>(?P<s>[^<\s]{3,})</", 12, 256, PW, "`<password>` elements (Maven settings.xml and friends)").g(Guard::Before("<p")),
    rx("docker-config-auth", C, &["auths"], r#"auths\\*"?[ \t]*:(?s:.){0,300}?\\*"auth\\*"[ \t]*:[ \t]*\\*"(?P<s>[A-Za-z0-9+/=]{12,})"#, 2, 600, TOK, "`auth` (base64 user:password) in a Docker `config.json`"),
    cu("kubernetes-secret", C, &["ecret"], custom::k8s_secret, "`data` / `stringData` values of a `kind: Secret` manifest"),
    rx("kubeconfig-client-key", C, &["key-"], r"client-key-data:[ \t]*\\*\x22?(?P<s>[A-Za-z0-9+/=]{20,})", 16, 256, TOK, "`client-key-data` in a kubeconfig").g(Guard::Before("client-")),
    rx("discord-bot-token", C, &["iscord"], r"(?i:discord)[^\n]{0,200}?(?:^|[^A-Za-z0-9_.-])(?P<s>[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40})%RD%", 4, 320, TOK, "Discord bot token near the word discord"),
    rx("twilio-api-key", C, &["wilio"], r"(?i:twilio)[^\n]{0,200}?(?:^|[^A-Za-z0-9])(?P<s>SK[0-9a-fA-F]{32})%R%", 4, 320, TOK, "Twilio API key SID near the word twilio"),
    cu("generic-password", C, &["assw", "ASSW"], gen_password, "NAME=value where NAME contains password/passwd"),
    cu("generic-secret", C, &["ecret", "ECRET", "redentia"], gen_secret, "NAME=value where NAME contains secret/credential"),
    cu("generic-token", C, &["oken", "OKEN"], gen_token, "NAME=value where NAME contains token"),
    cu("generic-api-key", C, &["_key", "_KEY", "Key", "-key", "apikey"], gen_api_key, "NAME=value where NAME is an api/access/private/secret/app key"),
];
