// registry.js: the one name the page's scripts share. Every other script is one call, run in
// page.py's SCRIPTS order, of a function that takes what the script uses (the exports of the
// scripts before it) and returns what it exports:
//   AW.define("format.js", ({h}) => ({fixed, largest}));
// Each script is its own scope; a script exporting a name another already exports stops the
// page with an error naming both, so a same-named helper can never silently replace another.
// A panel is one script calling AW.panel(script, lib => build): build(ctx) returns
// {section, update(change)} (change: "sentence", "follow" or "wiring"; see main.js); panels
// appear in SCRIPTS order. Adding a panel: its script, and its name in SCRIPTS.
const AW = {
  lib: Object.create(null), owners: new Map(), panels: [],
  define(script, factory) {
    for (const [name, value] of Object.entries(factory(this.lib) || {})) {
      if (this.owners.has(name)) {
        throw new Error(`${script} exports ${name}, which ${this.owners.get(name)} already exports`);
      }
      this.owners.set(name, script);
      this.lib[name] = value;
    }
  },
  panel(script, factory) { this.panels.push({script, build: factory(this.lib)}); },
};
