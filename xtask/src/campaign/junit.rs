//! nextest's JUnit files, read: each test case, its binary and its failure.

/// One test case of a JUnit file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct JunitCase {
    /// The test binary (nextest's classname).
    pub(super) binary: String,
    pub(super) name: String,
    /// The failure's message, when the test failed.
    pub(super) failure: Option<String>,
    pub(super) skipped: bool,
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// The value of attribute `name` in the tag text `tag`.
fn attr(tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let at = tag.find(&key)? + key.len();
    let end = tag[at..].find('"')?;
    Some(unescape(&tag[at..at + end]))
}

/// The test cases of a JUnit file as nextest writes it (one `<testcase>` per test, with a
/// `<failure>` or `<error>` inside when it failed).
pub(super) fn parse_junit(text: &str) -> Vec<JunitCase> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("<testcase ") {
        rest = &rest[at..];
        let tag_end = rest.find('>').unwrap_or(rest.len());
        let tag = &rest[..tag_end];
        let self_closing = tag.ends_with('/');
        let body_end = if self_closing {
            tag_end
        } else {
            rest.find("</testcase>").unwrap_or(rest.len())
        };
        let body = &rest[tag_end.min(body_end)..body_end];
        let failure = ["<failure", "<error"].iter().find_map(|t| {
            body.find(t)
                .map(|f| attr(&body[f..], "message").unwrap_or_else(|| "failed".into()))
        });
        out.push(JunitCase {
            binary: attr(tag, "classname").unwrap_or_default(),
            name: attr(tag, "name").unwrap_or_default(),
            failure,
            skipped: body.contains("<skipped"),
        });
        rest = &rest[body_end.max(1).min(rest.len())..];
    }
    out
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// nextest's JUnit for a shard with one passing and one failing slice.
    pub(in crate::campaign) fn junit(failing: &str) -> String {
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="nextest-run" tests="2" failures="1">
    <testsuite name="card-tests::campaign" tests="2" failures="1">
        <testcase name="campaign_fuzz_slice_00" classname="card-tests::campaign" time="1.0"/>
        <testcase name="{failing}" classname="card-tests::campaign" time="3.0">
            <failure message="thread &apos;{failing}&apos; panicked at tests/campaign.rs:9:5" type="test failure">found 1 failure(s)</failure>
        </testcase>
    </testsuite>
</testsuites>"#
        )
    }

    #[test]
    fn junit_cases_and_their_failures_are_read() {
        let cases = parse_junit(&junit("campaign_fuzz_slice_02"));
        assert_eq!(cases.len(), 2);
        assert_eq!(cases[0].failure, None);
        assert_eq!(cases[1].name, "campaign_fuzz_slice_02");
        assert_eq!(cases[1].binary, "card-tests::campaign");
        assert_eq!(
            cases[1].failure.as_deref(),
            Some("thread 'campaign_fuzz_slice_02' panicked at tests/campaign.rs:9:5")
        );
    }
}
