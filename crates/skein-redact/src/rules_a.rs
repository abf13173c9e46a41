//! Tier A rules: self-identifying prefixes (see `table.rs` for the row format).

use crate::custom;
use crate::filters;
use crate::named;
use crate::shapes;
use crate::table::Tier::A;
use crate::table::{Def, Guard, TOK, TOKD, cu, rx};

/// Legacy Notion `secret_…`: the `ecret` anchor counts only after `s` and before `_`; the
/// `ntn_` anchor always counts.
fn notion_anchor(hay: &[u8], s: usize, e: usize) -> bool {
    hay[s..].starts_with(b"ntn_") || (s >= 1 && hay[s - 1] == b's' && hay.get(e) == Some(&b'_'))
}

#[rustfmt::skip]
pub(crate) static TIER_A: &[Def] = &[
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
    rx("stripe-secret-key", A, &["^sk_", "^rk_"], r"%L%(?P<s>[sr]k_(?:live|test|prod)_[A-Za-z0-9]{20,})%R%", 16, 256, TOK, "Stripe secret and restricted keys"),
    rx("stripe-webhook-secret", A, &["^whsec_"], r"%L%(?P<s>whsec_[A-Za-z0-9+/=]{24,})%RB%", 16, 120, TOK, "Stripe webhook signing secret"),
    rx("google-api-key", A, &["^AIza"], r"%L%(?P<s>AIza[A-Za-z0-9_-]{35})%RD%", 16, 45, TOK, "Google API key (Maps, Firebase, Gemini)"),
    rx("google-oauth-client-secret", A, &["^GOCSPX-"], r"%L%(?P<s>GOCSPX-[A-Za-z0-9_-]{20,})%RD%", 16, 80, TOK, "Google OAuth client secret"),
    rx("google-oauth-access-token", A, &["^ya29."], r"%L%(?P<s>ya29\.[A-Za-z0-9_.-]{30,})%RD%", 16, 256, TOKD, "Google OAuth access token"),
    rx("google-oauth-refresh-token", A, &["^1//0"], r"%L%(?P<s>1//0[A-Za-z0-9_-]{30,})%RD%", 16, 256, TOKD, "Google OAuth refresh token"),
    cu("gcp-private-key-id", A, &["_key"], named::gcp_key_id, "`private_key_id` of a GCP service-account JSON"),
    cu("private-key", A, &["PRIVATE KEY"], custom::pem, "PEM private keys (RSA/EC/DSA/OpenSSH/PKCS#8/encrypted/PGP), also without END line"),
    rx("putty-private-key", A, &["Private-Lines"], r"(?P<s>Private-Lines:[ \t]*\d+(?:\s|\\+[nrt]|[A-Za-z0-9+/=])+(?:-MAC:[ \t]*[0-9a-fA-F]+)?)", 2, 256, None, "PuTTY `.ppk` private part"),
    rx("jwt", A, &["^eyJ"], r"%L%(?P<s>eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.?[A-Za-z0-9_-]*)%RD%", 16, 256, Some(filters::jwt), "JSON Web Token (header.payload.signature)"),
    cu("jwt-base64", A, &["^ZXlK"], shapes::jwt_base64, "A JSON Web Token encoded once more in base64 (`ZXlK…`)"),
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
    rx("notion-token", A, &["^ntn_", "ecret"], r"%L%(?P<s>ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})%R%", 16, 60, TOK, "Notion integration token (`ntn_`, legacy `secret_`)").g(Guard::Fn(notion_anchor)),
    rx("postman-api-key", A, &["^PMAK-"], r"%L%(?P<s>PMAK-[a-f0-9]{24}-[a-f0-9]{34})%R%", 16, 80, TOK, "Postman API key"),
    rx("grafana-token", A, &["^gls", "^glc", "^eyJ"], r"%L%(?P<s>glsa_[A-Za-z0-9]{32}_[a-fA-F0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2}|eyJrIjoi[A-Za-z0-9]{70,400}={0,3})%RB%", 16, 256, TOK, "Grafana service-account, Cloud and legacy API keys"),
    rx("doppler-token", A, &["^dp."], r"%L%(?P<s>dp\.(?:pt|st(?:\.[a-z0-9_-]{1,30})?)\.[A-Za-z0-9]{40,})%R%", 16, 120, TOK, "Doppler personal and service tokens"),
    rx("pulumi-token", A, &["^pul-"], r"%L%(?P<s>pul-[a-f0-9]{40})%R%", 16, 60, TOK, "Pulumi access token"),
    rx("atlassian-api-token", A, &["^ATATT3"], r"%L%(?P<s>ATATT3[A-Za-z0-9_=-]{100,})%RD%", 16, 256, TOK, "Atlassian API token"),
    rx("heroku-api-key", A, &["^HRKU-"], r"%L%(?P<s>HRKU-[A-Za-z0-9_-]{40,})%RD%", 16, 120, TOK, "Heroku API key (new format)"),
    rx("newrelic-api-key", A, &["^NRAK-", "^NRJS-", "^NRII-"], r"%L%(?P<s>NRAK-[A-Z0-9]{27}|NRJS-[a-f0-9]{19}|NRII-[A-Za-z0-9-]{32})%RD%", 16, 50, TOK, "New Relic user, browser and insert keys"),
    rx("sentry-token", A, &["^sntry"], r"%L%(?P<s>sntrys_eyJ[A-Za-z0-9+/=_-]{50,}|sntryu_[a-f0-9]{64})%RB%", 16, 256, TOK, "Sentry organisation and user auth tokens"),
    // Added for gitleaks coverage (docs/redact.md, "Coverage").
    rx("square-access-token", A, &["^sq0a", "^EAAA"], r"%LB%(?P<s>sq0atp-[A-Za-z0-9_-]{22,60}|EAAA[A-Za-z0-9_-]{60})%RB%", 16, 90, TOK, "Square access token (`sq0atp-`, `EAAA…`)"),
    rx("square-oauth-secret", A, &["^sq0c"], r"%L%(?P<s>sq0csp-[A-Za-z0-9_-]{43})%RD%", 16, 60, TOK, "Square OAuth application secret"),
    rx("braintree-access-token", A, &["oken"], r"(?P<s>access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32})", 16, 80, TOK, "Braintree access token").g(Guard::After("$")),
    rx("mapbox-token", A, &["eyJ"], r"%L%(?P<s>[st]k\.eyJ[A-Za-z0-9_-]{30,}\.[A-Za-z0-9_-]{20,})%RD%", 20, 256, TOK, "Mapbox secret and temporary tokens (`sk.eyJ…`)").g(Guard::Before("k.")),
    rx("airtable-token", A, &["^pat"], r"%L%(?P<s>pat[A-Za-z0-9]{14}\.[a-f0-9]{64})%R%", 16, 90, TOK, "Airtable personal access token").g(Guard::ByteAt(17, b'.')),
    rx("harness-token", A, &["^pat", "^sat."], r"%L%(?P<s>[ps]at\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20})%R%", 16, 90, TOK, "Harness personal and service-account tokens").g(Guard::ByteAt(3, b'.')),
    rx("flyio-token", A, &["^fo1_", "^fm1a", "^fm1r", "^fm2_"], r"%L%(?P<s>fo1_[A-Za-z0-9_-]{43}|fm1[ar]_[A-Za-z0-9+/]{100,}={0,3}|fm2_[A-Za-z0-9+/]{100,}={0,3})%RB%", 16, 256, TOK, "Fly.io access tokens and macaroons"),
    rx("contentful-token", A, &["^CFPAT-"], r"%L%(?P<s>CFPAT-[A-Za-z0-9_-]{43})%RD%", 16, 60, TOK, "Contentful personal access token"),
    rx("dynatrace-token", A, &["^dt0c"], r"%L%(?P<s>dt0c[0-9]{2}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64})%R%", 16, 110, TOK, "Dynatrace API token"),
    rx("planetscale-token", A, &["pscale_"], r"(?P<s>pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_.=-]{32,64})%RD%", 16, 90, TOK, "PlanetScale service token, OAuth token and password"),
    rx("firebase-cloud-messaging-key", A, &["APA91b"], r"%L%(?P<s>AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,})%RD%", 20, 256, TOK, "Firebase Cloud Messaging legacy server key"),
    rx("onepassword-secret-key", A, &["^A3-"], r"%L%(?P<s>A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5})%RD%", 16, 60, TOK, "1Password account secret key"),
    rx("artifactory-token", A, &["^AKCp", "^cmVmd"], r"%L%(?P<s>AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59})%R%", 16, 90, TOK, "JFrog Artifactory API key and reference token"),
    rx("aws-bedrock-api-key", A, &["^ABSK", "^bedrock-api-key-"], r"%LB%(?P<s>ABSK[A-Za-z0-9+/]{109,269}={0,2}|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=]*(?:&Version=1)?)%RB%", 16, 256, TOK, "Amazon Bedrock API keys (long- and short-lived)"),
    rx("clojars-token", A, &["^CLOJARS_"], r"%L%(?P<s>CLOJARS_[A-Za-z0-9]{60})%R%", 16, 80, TOK, "Clojars deploy token"),
    rx("cloudflare-origin-ca-key", A, &["^v1.0-"], r"%L%(?P<s>v1\.0-[a-f0-9]{24}-[a-f0-9]{146})%R%", 16, 200, TOK, "Cloudflare Origin CA key"),
    rx("duffel-token", A, &["^duffel_"], r"%L%(?P<s>duffel_(?:test|live)_[A-Za-z0-9_=-]{43})%RD%", 16, 70, TOK, "Duffel API token"),
    rx("easypost-token", A, &["^EZAK", "^EZTK"], r"%L%(?P<s>EZ[AT]K[A-Za-z0-9]{54})%R%", 16, 70, TOK, "EasyPost production and test API keys"),
    rx("flutterwave-secret-key", A, &["^FLWSECK"], r"%L%(?P<s>FLWSECK(?:_TEST)?-[a-h0-9]{32}-X|FLWSECK(?:_TEST)?[a-f0-9]{12})%RD%", 16, 70, TOK, "Flutterwave secret and encryption keys"),
    rx("frameio-token", A, &["^fio-u-"], r"%L%(?P<s>fio-u-[A-Za-z0-9_=-]{64})%RD%", 16, 80, TOK, "Frame.io API token"),
    rx("intra42-client-secret", A, &["s4t2"], r"%L%(?P<s>s-s4t2(?:ud|af)-[a-f0-9]{64})%R%", 8, 80, TOK, "42 Intra OAuth client secret"),
    rx("maxmind-license-key", A, &["_mmk"], r"%L%(?P<s>[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk)%R%", 48, 8, TOK, "MaxMind license key"),
    rx("prefect-token", A, &["^pnu_"], r"%L%(?P<s>pnu_[A-Za-z0-9]{36})%R%", 16, 50, TOK, "Prefect API token"),
    rx("readme-token", A, &["^rdme_"], r"%L%(?P<s>rdme_[a-z0-9]{70})%R%", 16, 90, TOK, "ReadMe API token"),
    rx("rubygems-token", A, &["^rubygems_"], r"%L%(?P<s>rubygems_[a-f0-9]{48})%R%", 16, 70, TOK, "RubyGems API key"),
    rx("scalingo-token", A, &["^tk-us-"], r"%L%(?P<s>tk-us-[A-Za-z0-9_-]{48})%RD%", 16, 70, TOK, "Scalingo API token"),
    rx("sendinblue-api-key", A, &["sib-"], r"%L%(?P<s>x(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16})%R%", 16, 100, TOK, "Brevo (Sendinblue) API and SMTP keys"),
    rx("shippo-token", A, &["^shippo_"], r"%L%(?P<s>shippo_(?:live|test)_[a-fA-F0-9]{40})%R%", 16, 70, TOK, "Shippo API token"),
    rx("sourcegraph-token", A, &["^sgp_"], r"%L%(?P<s>sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40})%R%", 16, 80, TOK, "Sourcegraph access token"),
    rx("sonarqube-token", A, &["^squ_", "^sqp_", "^sqa_"], r"%L%(?P<s>sq[upa]_[a-f0-9]{40})%R%", 16, 60, TOK, "SonarQube user, project and analysis tokens"),
    rx("typeform-token", A, &["^tfp_"], r"%L%(?P<s>tfp_[A-Za-z0-9_.=-]{59})%RD%", 16, 80, TOK, "Typeform personal access token"),
    rx("defined-networking-token", A, &["^dnkey-"], r"%L%(?P<s>dnkey-[A-Za-z0-9=_-]{26}-[A-Za-z0-9=_-]{52})%RD%", 16, 100, TOK, "Defined Networking (Nebula) API token"),
    rx("facebook-access-token", A, &["^EAAM", "^EAAC"], r"%LB%(?P<s>EAA[MC][A-Za-z0-9]{100,})%RB%", 16, 256, TOK, "Facebook / Meta page and user access tokens (`EAAM…`, `EAAC…`)"),
];
