//! Drawing a [`Chart`]: its panels stacked vertically, each a grouped bar
//! chart with a legend.

use super::{Chart, Panel};
use anyhow::{Context, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// Height of one panel in pixels.
const PANEL_HEIGHT: u32 = 420;

/// Draws `chart` into the SVG file `output`.
pub fn draw(chart: &Chart, output: &Path) -> Result<()> {
    let widest = chart
        .panels
        .iter()
        .map(|p| p.groups.len())
        .max()
        .unwrap_or(1);
    let width = (200 + widest * (40 + 30 * chart.series.len())).max(900) as u32;
    let height = 60 + PANEL_HEIGHT * chart.panels.len().max(1) as u32;
    let root = SVGBackend::new(output, (width, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(&chart.title, ("sans-serif", 24))?;
    let areas = root.split_evenly((chart.panels.len().max(1), 1));
    for (panel, area) in chart.panels.iter().zip(areas) {
        draw_panel(panel, &chart.series, &area)?;
    }
    root.present()
        .with_context(|| format!("writing {}", output.display()))
}

/// Human-readable axis numbers: 1.5M, 20k, 3.2.
fn short_number(y: f64) -> String {
    if y >= 1e6 {
        format!("{:.1}M", y / 1e6)
    } else if y >= 1e3 {
        format!("{:.0}k", y / 1e3)
    } else {
        format!("{y:.1}")
    }
}

fn draw_panel(
    panel: &Panel,
    series: &[String],
    area: &DrawingArea<SVGBackend<'_>, Shift>,
) -> Result<()> {
    let n = panel.groups.len().max(1);
    let values: Vec<f64> = panel.values.iter().flatten().flatten().copied().collect();
    let max = values.iter().copied().fold(0.0f64, f64::max).max(1e-9);
    // On a log scale the bars are drawn in log10 units from `floor`.
    let log = panel.log;
    let floor = if log {
        values
            .iter()
            .copied()
            .filter(|v| *v > 0.0)
            .fold(max, f64::min)
            .log10()
            .floor()
    } else {
        0.0
    };
    let y = |v: f64| if log { v.max(1e-12).log10() } else { v };
    let y_top = if log {
        max.log10().ceil().max(floor + 1.0) + 0.05
    } else {
        max * 1.15
    };
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.caption, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), floor..y_top)?;
    let names = panel.groups.clone();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_labels(if log {
            (y_top - floor).ceil() as usize + 1
        } else {
            10
        })
        .x_labels(n * 2 + 1)
        .x_label_formatter(&move |x: &f64| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < names.len() {
                names[i as usize].clone()
            } else {
                String::new()
            }
        })
        .y_label_formatter(&|v: &f64| short_number(if log { 10f64.powf(*v) } else { *v }))
        .draw()?;
    let bar = 0.8 / series.len().max(1) as f64;
    for (si, (label, row)) in series.iter().zip(&panel.values).enumerate() {
        let color = Palette99::pick(si).to_rgba();
        let bars: Vec<_> = row
            .iter()
            .enumerate()
            .filter_map(|(gi, v)| {
                let v = (*v)?;
                let x0 = gi as f64 - 0.4 + si as f64 * bar;
                Some(Rectangle::new(
                    [(x0, floor), (x0 + bar * 0.95, y(v).max(floor))],
                    color.filled(),
                ))
            })
            .collect();
        chart
            .draw_series(bars)?
            .label(label.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    Ok(())
}
