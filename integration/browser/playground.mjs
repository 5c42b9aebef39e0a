// Drives the scan service's playground in Debian's Chromium with
// playwright-core, as a user at the keyboard would, and prints one JSON
// document of what the page showed: the Go test compares it with the
// engine's own result for the same texts.
//
// The plan is JSON in the environment variable PLAN:
//   {"url", "chromium", "userDataDir", "steps": [...]}
// with steps
//   {"do": "scan", "text", "via": "ctrl-enter"|"meta-enter"|"button"|"fill", "request": true|false}
//     types the text (fill: pastes it) and scans; request false when the
//     page is not expected to ask the server
//   {"do": "caller", "value"}          type a wallet address into its field
//   {"do": "screenshot", "path", "dark"}  dark: in the dark colour scheme
//   {"do": "reload"}
//   {"do": "tab-order", "count"}     focus order from the page's start
// Every scan, reload and tab-order step adds one snapshot to the output.
import { chromium } from "playwright-core";

const plan = JSON.parse(process.env.PLAN);

// The flags a closed network needs: no background connections, no QUIC,
// no first-run or component updates; a fresh profile each run.
const context = await chromium.launchPersistentContext(plan.userDataDir, {
	executablePath: plan.chromium,
	headless: true,
	args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync"],
	viewport: { width: 1280, height: 900 },
	colorScheme: "light",
});

const out = { snapshots: [], requests: [], console: [], pageErrors: [] };
try {
	const page = context.pages()[0] || (await context.newPage());
	page.setDefaultTimeout(20000);
	page.on("request", (r) => out.requests.push({ method: r.method(), url: r.url(), status: 0 }));
	page.on("response", (r) => {
		const req = out.requests.findLast((x) => x.url === r.url() && x.method === r.request().method() && x.status === 0);
		if (req) req.status = r.status();
	});
	page.on("requestfailed", (r) => out.requests.push({ method: r.method(), url: r.url(), status: -1, failure: r.failure()?.errorText }));
	page.on("console", (m) => { if (m.type() === "error" || m.type() === "warning") out.console.push(m.type() + ": " + m.text()); });
	page.on("pageerror", (e) => out.pageErrors.push(String(e)));

	const open = async () => {
		const resp = await page.goto(plan.url);
		out.status = resp.status();
		out.csp = resp.headers()["content-security-policy"] || "";
		await page.waitForFunction(() => document.readyState === "complete");
	};
	await open();

	const textbox = page.getByLabel("Text to scan");
	const busyDone = () => page.waitForFunction(() => document.getElementById("result").getAttribute("aria-busy") === "false");

	for (const step of plan.steps) {
		switch (step.do) {
		case "caller": {
			const field = page.getByLabel("Your Solana wallet address");
			await field.focus();
			await page.keyboard.press("Control+A");
			await page.keyboard.press("Backspace");
			await page.keyboard.type(step.value);
			break;
		}
		case "scan": {
			await textbox.focus();
			if (step.via === "fill") {
				await textbox.fill(step.text);
			} else {
				await page.keyboard.press("Control+A");
				await page.keyboard.press("Backspace");
				await page.keyboard.type(step.text);
			}
			const answered = step.request === false ? null
				: page.waitForResponse((r) => r.request().method() === "POST" && /\/(scan|precheck)$/.test(new URL(r.url()).pathname));
			if (step.via === "button") {
				// Tab from the text to the button, and press it.
				await page.keyboard.press("Tab");
				await page.keyboard.press("Enter");
			} else if (step.via === "meta-enter") {
				await page.keyboard.press("Meta+Enter");
			} else {
				await page.keyboard.press("Control+Enter");
			}
			if (answered) await answered;
			await busyDone();
			out.snapshots.push(await snapshot(page));
			break;
		}
		case "screenshot":
			if (step.dark) await page.emulateMedia({ colorScheme: "dark" });
			await page.screenshot({ path: step.path, fullPage: true });
			if (step.dark) await page.emulateMedia({ colorScheme: "light" });
			break;
		case "reload":
			await open();
			out.snapshots.push(await snapshot(page));
			break;
		case "tab-order": {
			const order = [await activeId(page)];
			for (let i = 0; i < step.count; i++) {
				await page.keyboard.press("Tab");
				order.push(await activeId(page));
			}
			const s = await snapshot(page);
			s.focusOrder = order;
			out.snapshots.push(s);
			break;
		}
		default:
			throw new Error("unknown step " + JSON.stringify(step));
		}
	}
} catch (e) {
	out.error = String(e && e.stack ? e.stack : e);
} finally {
	await context.close();
}
console.log(JSON.stringify(out));

// activeId names the focused element and whether its focus ring shows.
async function activeId(page) {
	return page.evaluate(() => {
		const el = document.activeElement;
		if (!el || el === document.body) return "body";
		const ring = getComputedStyle(el).outlineStyle !== "none" && parseFloat(getComputedStyle(el).outlineWidth) > 0;
		return (el.id || el.tagName.toLowerCase()) + (ring ? "+ring" : "");
	});
}

// snapshot is what the page shows now, read from the DOM.
async function snapshot(page) {
	return page.evaluate(() => {
		const $ = (id) => document.getElementById(id);
		const shown = (el) => !!el && el.getClientRects().length > 0;
		return {
			resultShown: shown($("result")),
			verdict: $("verdict").dataset.verdict || "",
			verdictWord: shown($("verdict-word")) ? $("verdict-word").innerText : "",
			verdictLive: $("verdict").getAttribute("aria-live") || "",
			detail: $("verdict-detail").textContent,
			markedShown: shown($("marked")),
			marked: $("marked").textContent,
			marks: [...document.querySelectorAll("mark")].map((m) => ({
				text: m.textContent, matches: m.dataset.m || "", start: Number(m.dataset.start), end: Number(m.dataset.end),
				title: m.title, describedBy: m.getAttribute("aria-describedby") || "", badge: getComputedStyle(m, "::after").content,
				inMarked: $("marked").contains(m),
			})),
			rows: [...document.querySelectorAll("#match-rows tr")].map((tr) => ({ id: tr.id, cells: [...tr.cells].map((c) => c.textContent) })),
			tableShown: shown($("matches")),
			sanitizedShown: shown($("sanitized")),
			sanitized: $("sanitized").textContent,
			paidNote: shown($("paid-note")) ? $("paid-note").textContent : "",
			error: shown($("error")) ? $("error").innerText : "",
			errorRole: $("error").getAttribute("role") || "",
			caller: $("caller").value,
			callerShown: shown($("caller")),
			count: $("count").textContent,
			modeNote: $("mode-note").textContent,
			pageText: document.body.innerText,
			rulesId: $("rules-id").textContent,
		};
	});
}
