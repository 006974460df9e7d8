//! Draw a [`Scene`] as a self-contained SVG.
//!
//! Layout is layout-rs's (a Sugiyama-style layered layout in pure Rust: rank
//! assignment, crossing reduction, Brandes–Köpf placement, edge labels as
//! their own layout nodes so they never sit on a table). We hand it boxes of
//! the size our own table cards need and collect the positions and edge
//! curves it computes through a [`RenderBackend`]; the drawing (cards with
//! header, badges and columns; colours and dashes per edge kind; legend and
//! caption) is ours. No font files, no scripts, no external references: the
//! SVG opens anywhere and can be inlined in the web page.

use std::collections::HashMap;
use std::fmt::Write as _;

use layout::core::base::Orientation;
use layout::core::color::Color;
use layout::core::format::{ClipHandle, RenderBackend};
use layout::core::geometry::Point;
use layout::core::style::{LineStyleKind, StyleAttr};
use layout::std_shapes::shapes::{Arrow, Element, LineEndKind, ShapeKind};
use layout::topo::layout::VisualGraph;

use super::scene::{EdgeKind, NodeKind, Scene, SceneNode};

/// Font size of edge labels when drawn.
const LABEL_PX: f64 = 11.0;
/// Edge labels are sized for the layout at this "font size": layout-rs
/// reserves `chars × size` pixels, and a character of an 11 px sans-serif
/// font is about 6.6 px wide.
const LABEL_LAYOUT_SIZE: usize = 7;
const HEADER_PX: f64 = 14.0;
const SMALL_PX: f64 = 11.0;
const LINE_H: f64 = 16.0;
const PAD: f64 = 8.0;
const MAX_COLUMNS: usize = 8;
const FONT: &str = "DejaVu Sans, Verdana, Arial, sans-serif";
const MONO: &str = "DejaVu Sans Mono, Menlo, Consolas, monospace";

/// Colours of a kind: (stroke, fill, text).
fn node_colors(k: NodeKind) -> (&'static str, &'static str, &'static str) {
    match k {
        NodeKind::Relevant => ("#1d4ed8", "#dbeafe", "#0f172a"),
        NodeKind::Bridge => ("#475569", "#f1f5f9", "#0f172a"),
        NodeKind::Refused => ("#b91c1c", "#fef2f2", "#7f1d1d"),
        NodeKind::Unused => ("#94a3b8", "#ffffff", "#64748b"),
    }
}

fn edge_style(k: EdgeKind) -> (&'static str, f64, &'static str) {
    match k {
        EdgeKind::Walk { .. } => ("#1d4ed8", 2.5, ""),
        EdgeKind::Branch => ("#15803d", 2.0, "7,4"),
        EdgeKind::Refused => ("#b91c1c", 1.6, "2,4"),
        EdgeKind::Unused => ("#94a3b8", 1.2, "4,4"),
    }
}

/// Width of `s` in pixels at `px`, estimated per character class from
/// DejaVu Sans's advances (capitals ≈ 0.7 em, lower case ≈ 0.58 em, bold
/// ≈ 10 % wider); only used to size boxes, so it errs on the wide side.
fn text_w(s: &str, px: f64, bold: bool) -> f64 {
    let em: f64 = s
        .chars()
        .map(|c| match c {
            'M' | 'W' | 'm' | 'w' | '↔' | '→' => 0.9,
            c if c.is_ascii_uppercase() => 0.72,
            'i' | 'l' | 'j' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' | ' ' => 0.34,
            c if c.is_ascii_digit() => 0.64,
            _ => 0.6,
        })
        .sum();
    em * px * if bold { 1.1 } else { 1.0 }
}

/// The lines of one table card.
struct Card {
    header: String,
    /// (text, class) below the header.
    lines: Vec<(String, &'static str)>,
    w: f64,
    h: f64,
}

fn card(n: &SceneNode) -> Card {
    let header = if n.key != n.table { format!("{} ({})", n.key, n.table) } else { n.table.clone() };
    let mut lines: Vec<(String, &'static str)> = Vec::new();
    if let Some(r) = &n.role {
        lines.push((format!("role: {r}"), "role"));
    }
    for b in &n.badges {
        lines.push((b.clone(), "badge"));
    }
    let shown = n.columns.len().min(MAX_COLUMNS);
    for c in &n.columns[..shown] {
        if n.multiplied.iter().any(|m| m.eq_ignore_ascii_case(c)) {
            lines.push((format!("{c} ×"), "mult"));
        } else {
            lines.push((c.clone(), "col"));
        }
    }
    if n.columns.len() > shown {
        lines.push((format!("… {} more column(s)", n.columns.len() - shown), "badge"));
    }
    for m in n.multiplied.iter().filter(|m| !n.columns.iter().any(|c| c.eq_ignore_ascii_case(m))) {
        lines.push((format!("{m} ×"), "mult"));
    }
    let mut w = text_w(&header, HEADER_PX, true);
    for (l, class) in &lines {
        let lw = match *class {
            // Monospace: every character is 0.6 em.
            "col" | "mult" => l.chars().count() as f64 * SMALL_PX * 0.62,
            _ => text_w(l, SMALL_PX, false),
        };
        w = w.max(lw);
    }
    let w = (w + 2.0 * PAD).max(90.0).ceil();
    let h = (HEADER_PX + 2.0 * PAD + lines.len() as f64 * LINE_H + if lines.is_empty() { 0.0 } else { 6.0 }).ceil();
    Card { header, lines, w, h }
}

/// What the layout computed, collected through [`RenderBackend`].
#[derive(Default)]
struct Collected {
    /// Node key → top-left and size.
    rects: HashMap<String, (Point, Point)>,
    /// Edge index → curve (layout-rs's `(point, control)` list) and heads.
    paths: HashMap<usize, (Vec<(Point, Point)>, (bool, bool))>,
    /// Edge labels: position, text, colour.
    labels: Vec<(Point, String, String)>,
}

impl RenderBackend for Collected {
    fn draw_rect(
        &mut self,
        xy: Point,
        size: Point,
        _look: &StyleAttr,
        properties: Option<String>,
        _clip: Option<ClipHandle>,
    ) {
        if let Some(key) = properties.and_then(|p| p.strip_prefix("n:").map(str::to_string)) {
            self.rects.insert(key, (xy, size));
        }
    }
    fn draw_line(&mut self, _: Point, _: Point, _: &StyleAttr, _: Option<String>) {}
    fn draw_circle(&mut self, _: Point, _: Point, _: &StyleAttr, _: Option<String>) {}
    fn draw_text(&mut self, xy: Point, text: &str, look: &StyleAttr) {
        if !text.is_empty() && look.font_size == LABEL_LAYOUT_SIZE {
            // `#rrggbbaa` → `#rrggbb`: every SVG viewer reads the short form.
            let c: String = look.line_color.to_web_color().chars().take(7).collect();
            self.labels.push((xy, text.to_string(), c));
        }
    }
    fn draw_arrow(
        &mut self,
        path: &[(Point, Point)],
        _dashed: bool,
        head: (bool, bool),
        _look: &StyleAttr,
        properties: Option<String>,
        _text: &str,
    ) {
        if let Some(i) = properties.and_then(|p| p.strip_prefix("e:").and_then(|s| s.parse().ok())) {
            self.paths.insert(i, (path.to_vec(), head));
        }
    }
    fn create_clip(&mut self, _: Point, _: Point, _: usize) -> ClipHandle {
        0
    }
}

/// XML-escape text and attribute values.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// Wrap `s` at about `width` pixels of small text.
fn wrap(s: &str, width: f64) -> Vec<String> {
    let max = ((width / (SMALL_PX * 0.6)) as usize).max(30);
    let mut out = Vec::new();
    let mut cur = String::new();
    for word in s.split_whitespace() {
        if !cur.is_empty() && cur.chars().count() + 1 + word.chars().count() > max {
            out.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Render `scene` as a standalone SVG document.
pub fn render(scene: &Scene) -> String {
    let cards: Vec<Card> = scene.nodes.iter().map(card).collect();
    let mut col = Collected::default();
    if !scene.nodes.is_empty() {
        let mut vg = VisualGraph::new(Orientation::LeftToRight);
        let mut handles = HashMap::new();
        for (n, c) in scene.nodes.iter().zip(&cards) {
            let look = StyleAttr::new(Color::fast("black"), 1, None, 0, 8);
            let el = Element::create_with_properties(
                ShapeKind::Box(String::new()),
                look,
                Orientation::LeftToRight,
                Point::new(c.w, c.h),
                format!("n:{}", n.key),
            );
            handles.insert(n.key.clone(), vg.add_node(el));
        }
        for (i, e) in scene.edges.iter().enumerate() {
            let (Some(&a), Some(&b)) = (handles.get(&e.from), handles.get(&e.to)) else { continue };
            if a == b {
                continue;
            }
            let (stroke, _, _) = edge_style(e.kind);
            let look = StyleAttr::new(Color::fast(stroke), 1, None, 0, LABEL_LAYOUT_SIZE);
            let head = if matches!(e.kind, EdgeKind::Walk { .. } | EdgeKind::Branch) {
                LineEndKind::Arrow
            } else {
                LineEndKind::None
            };
            let arrow = Arrow::with_properties(
                LineEndKind::None,
                head,
                LineStyleKind::Normal,
                &e.label,
                &look,
                format!("e:{i}"),
                &None,
                &None,
            );
            vg.add_edge(arrow, a, b);
        }
        vg.do_it(false, false, false, &mut col);
    }
    draw(scene, &cards, &col)
}

fn draw(scene: &Scene, cards: &[Card], col: &Collected) -> String {
    // Bounding box of the layout.
    let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    let mut grow = |p: Point, s: Point| {
        x0 = x0.min(p.x);
        y0 = y0.min(p.y);
        x1 = x1.max(p.x + s.x);
        y1 = y1.max(p.y + s.y);
    };
    for (p, s) in col.rects.values() {
        grow(*p, *s);
    }
    for (path, _) in col.paths.values() {
        for (a, b) in path {
            grow(*a, Point::zero());
            grow(*b, Point::zero());
        }
    }
    for (p, t, _) in &col.labels {
        let w = text_w(t, LABEL_PX, false);
        grow(Point::new(p.x - w / 2.0, p.y - LABEL_PX), Point::new(w, LABEL_PX * 2.0));
    }
    if x0 > x1 {
        (x0, y0, x1, y1) = (0.0, 0.0, 400.0, 40.0);
    }
    let margin = 20.0;
    let title_h = 34.0;
    let graph_w = x1 - x0;
    let width = (graph_w + 2.0 * margin).max(560.0);
    let text_width = width - 2.0 * margin;
    let mut caption: Vec<String> = Vec::new();
    for c in &scene.caption {
        caption.extend(wrap(c, text_width));
    }
    let legend = legend_items(scene);
    let legend_h = if legend.is_empty() { 0.0 } else { 26.0 };
    let graph_top = title_h + margin / 2.0;
    let caption_top = graph_top + (y1 - y0) + margin;
    let height = caption_top + caption.len() as f64 * LINE_H + legend_h + margin;
    // Shift so the layout starts at (margin + centering, graph_top).
    let dx = margin + (width - 2.0 * margin - graph_w) / 2.0 - x0;
    let dy = graph_top - y0;

    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}" font-family="{FONT}" role="img" aria-label="{aria}">
<title>{aria}</title>
<style>
.hdr{{font-size:{HEADER_PX}px;font-weight:bold}}
.badge{{font-size:{SMALL_PX}px;font-style:italic}}
.role{{font-size:{SMALL_PX}px;font-weight:bold}}
.col{{font-size:{SMALL_PX}px;font-family:{MONO}}}
.mult{{font-size:{SMALL_PX}px;font-family:{MONO};fill:#b91c1c;font-weight:bold}}
.lbl{{font-size:{LABEL_PX}px}}
.cap{{font-size:{SMALL_PX}px;fill:#334155}}
</style>
<defs>
"##,
        w = width,
        h = height,
        aria = esc(&scene.title),
    );
    for (name, c) in [("walk", "#1d4ed8"), ("branch", "#15803d")] {
        let _ = writeln!(
            s,
            r#"<marker id="arrow-{name}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{c}"/></marker>"#
        );
    }
    s.push_str("</defs>\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
    let _ = writeln!(s, r#"<text x="{margin}" y="24" class="hdr">{}</text>"#, esc(&scene.title));

    // Edges first, so cards cover the curve ends.
    let mut order: Vec<usize> = col.paths.keys().copied().collect();
    order.sort_unstable();
    for i in order {
        let (path, head) = &col.paths[&i];
        let e = &scene.edges[i];
        if path.len() < 2 {
            continue;
        }
        let (stroke, width, dash) = edge_style(e.kind);
        let mut d = format!(
            "M {:.1} {:.1} C {:.1} {:.1}, {:.1} {:.1}, {:.1} {:.1}",
            path[0].0.x + dx,
            path[0].0.y + dy,
            path[0].1.x + dx,
            path[0].1.y + dy,
            path[1].0.x + dx,
            path[1].0.y + dy,
            path[1].1.x + dx,
            path[1].1.y + dy
        );
        for p in &path[2..] {
            let _ = write!(d, " S {:.1} {:.1}, {:.1} {:.1}", p.0.x + dx, p.0.y + dy, p.1.x + dx, p.1.y + dy);
        }
        let marker = match e.kind {
            EdgeKind::Walk { .. } => "walk",
            EdgeKind::Branch => "branch",
            _ => "",
        };
        let mut attrs = String::new();
        if !marker.is_empty() {
            if head.1 {
                let _ = write!(attrs, r#" marker-end="url(#arrow-{marker})""#);
            }
            if head.0 {
                let _ = write!(attrs, r#" marker-start="url(#arrow-{marker})""#);
            }
        }
        if !dash.is_empty() {
            let _ = write!(attrs, r#" stroke-dasharray="{dash}""#);
        }
        let _ = writeln!(
            s,
            r#"<path class="edge edge-{kind}" data-from="{from}" data-to="{to}" d="{d}" fill="none" stroke="{stroke}" stroke-width="{width}"{attrs}><title>{note}</title></path>"#,
            kind = kind_name(e.kind),
            from = esc(&e.from),
            to = esc(&e.to),
            note = esc(e.note.as_deref().unwrap_or(&e.label)),
        );
    }
    for (p, t, c) in &col.labels {
        let w = text_w(t, LABEL_PX, false) + 6.0;
        let (x, y) = (p.x + dx, p.y + dy);
        let _ = writeln!(
            s,
            r##"<g class="label"><rect x="{:.1}" y="{:.1}" width="{w:.1}" height="{:.1}" rx="3" fill="#ffffff" fill-opacity="0.9"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" class="lbl" fill="{c}">{}</text></g>"##,
            x - w / 2.0,
            y - LABEL_PX * 0.8,
            LABEL_PX * 1.6,
            y + LABEL_PX * 0.35,
            esc(t)
        );
    }
    // Cards.
    for (n, c) in scene.nodes.iter().zip(cards) {
        let Some((p, size)) = col.rects.get(&n.key) else { continue };
        let (x, y) = (p.x + dx, p.y + dy);
        let (stroke, fill, text) = node_colors(n.kind);
        let dash =
            if matches!(n.kind, NodeKind::Refused | NodeKind::Unused) { r#" stroke-dasharray="5,3""# } else { "" };
        let tip = n.note.clone().unwrap_or_else(|| kind_text(n.kind).to_string());
        let _ = writeln!(
            s,
            r#"<g class="table table-{kind}" data-key="{key}"><title>{title}</title>"#,
            kind = node_kind_name(n.kind),
            key = esc(&n.key),
            title = esc(&format!("{}: {tip}", n.key)),
        );
        let _ = writeln!(
            s,
            r#"<rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" rx="6" fill="{fill}" stroke="{stroke}" stroke-width="{}"{dash}/>"#,
            size.x,
            size.y,
            if n.kind == NodeKind::Relevant { 2.0 } else { 1.4 }
        );
        let hy = y + PAD + HEADER_PX * 0.85;
        let _ =
            writeln!(s, r#"<text x="{:.1}" y="{hy:.1}" class="hdr" fill="{text}">{}</text>"#, x + PAD, esc(&c.header));
        if !c.lines.is_empty() {
            let ly = y + PAD * 2.0 + HEADER_PX;
            let _ = writeln!(
                s,
                r#"<line x1="{x:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{stroke}" stroke-width="0.8"/>"#,
                x + size.x
            );
            for (k, (l, class)) in c.lines.iter().enumerate() {
                let _ = writeln!(
                    s,
                    r#"<text x="{:.1}" y="{:.1}" class="{class}" fill="{text}">{}</text>"#,
                    x + PAD,
                    ly + 4.0 + (k as f64 + 0.8) * LINE_H,
                    esc(l)
                );
            }
        }
        s.push_str("</g>\n");
    }
    // Caption and legend.
    for (k, line) in caption.iter().enumerate() {
        let _ = writeln!(
            s,
            r#"<text x="{margin}" y="{:.1}" class="cap">{}</text>"#,
            caption_top + (k as f64 + 0.8) * LINE_H,
            esc(line)
        );
    }
    let mut lx = margin;
    let ly = caption_top + caption.len() as f64 * LINE_H + 14.0;
    for (kind, text) in legend {
        match kind {
            Legend::Node(k) => {
                let (stroke, fill, _) = node_colors(k);
                let _ = writeln!(
                    s,
                    r#"<rect x="{lx:.1}" y="{:.1}" width="14" height="10" rx="2" fill="{fill}" stroke="{stroke}"/>"#,
                    ly - 9.0
                );
            }
            Legend::Edge(k) => {
                let (stroke, w, dash) = edge_style(k);
                let da = if dash.is_empty() { String::new() } else { format!(r#" stroke-dasharray="{dash}""#) };
                let _ = writeln!(
                    s,
                    r#"<line x1="{lx:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{stroke}" stroke-width="{w}"{da}/>"#,
                    ly - 4.0,
                    lx + 14.0,
                    ly - 4.0
                );
            }
        }
        let _ = writeln!(s, r#"<text x="{:.1}" y="{ly:.1}" class="cap">{}</text>"#, lx + 18.0, esc(text));
        lx += 18.0 + text_w(text, SMALL_PX, false) + 16.0;
    }
    s.push_str("</svg>\n");
    s
}

#[derive(Clone, Copy)]
enum Legend {
    Node(NodeKind),
    Edge(EdgeKind),
}

fn legend_items(scene: &Scene) -> Vec<(Legend, &'static str)> {
    let mut v = Vec::new();
    let has_node = |k: NodeKind| scene.nodes.iter().any(|n| n.kind == k);
    let has_edge = |f: fn(EdgeKind) -> bool| scene.edges.iter().any(|e| f(e.kind));
    if has_node(NodeKind::Relevant) {
        v.push((Legend::Node(NodeKind::Relevant), "relevant"));
    }
    if has_node(NodeKind::Bridge) {
        v.push((Legend::Node(NodeKind::Bridge), "joined to connect"));
    }
    if has_edge(|k| matches!(k, EdgeKind::Walk { .. })) {
        v.push((Legend::Edge(EdgeKind::Walk { step: 0 }), "INNER JOIN (walk, in order)"));
    }
    if has_edge(|k| k == EdgeKind::Branch) {
        v.push((Legend::Edge(EdgeKind::Branch), "LEFT JOIN (pattern branch)"));
    }
    if has_node(NodeKind::Refused) || has_edge(|k| k == EdgeKind::Refused) {
        v.push((Legend::Edge(EdgeKind::Refused), "refused by a model rule"));
    }
    if has_node(NodeKind::Unused) {
        v.push((Legend::Edge(EdgeKind::Unused), "allowed, not needed"));
    }
    v
}

fn kind_name(k: EdgeKind) -> &'static str {
    match k {
        EdgeKind::Walk { .. } => "walk",
        EdgeKind::Branch => "branch",
        EdgeKind::Refused => "refused",
        EdgeKind::Unused => "unused",
    }
}

fn node_kind_name(k: NodeKind) -> &'static str {
    match k {
        NodeKind::Relevant => "relevant",
        NodeKind::Bridge => "bridge",
        NodeKind::Refused => "refused",
        NodeKind::Unused => "unused",
    }
}

fn kind_text(k: NodeKind) -> &'static str {
    match k {
        NodeKind::Relevant => "relevant table",
        NodeKind::Bridge => "joined only to connect the relevant tables",
        NodeKind::Refused => "refused by a model rule",
        NodeKind::Unused => "allowed, not on the cheapest walk",
    }
}
