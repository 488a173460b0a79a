// The widgets' bundle: one ES module per entry in tilelab/views/static/, which
// anywidget loads as `_esm` from that path (shipped in the wheel, never committed).
// Build with `npm run build:widgets` (tsc first: entries are tsc's output in lib/widgets/).
// Run directly (`node webpack.widgets.config.js`) it builds; required, it is a plain webpack config.
const fs = require('fs');
const path = require('path');

// Each entry is a module whose default export is anywidget's `{ render }`.
const ENTRIES = ['explorer'].filter(name => fs.existsSync(path.join(__dirname, 'src', 'widgets', `${name}.ts`)));

const config = {
  mode: process.env.TILELAB_WIDGETS_MODE || 'production',
  devtool: false,
  context: __dirname,
  entry: Object.fromEntries(ENTRIES.map(name => [name, `./lib/widgets/${name}.js`])),
  experiments: { outputModule: true },
  output: {
    path: path.join(__dirname, 'tilelab', 'views', 'static'),
    filename: '[name].js',
    module: true,
    library: { type: 'module' },
    chunkFormat: 'module',
    clean: true
  },
  target: ['web', 'es2020'],
  resolve: { extensions: ['.js'] },
  // One file per entry: anywidget loads a single module, so nothing may be split off or loaded later.
  optimization: { splitChunks: false, runtimeChunk: false },
  performance: { hints: false }
};

module.exports = config;

if (require.main === module) {
  const webpack = require('webpack');
  webpack(config, (error, stats) => {
    if (error) {
      console.error(error.stack || error);
      process.exit(1);
    }
    console.log(stats.toString({ colors: false, modules: false, chunks: false, assets: true }));
    if (stats.hasErrors()) {
      process.exit(1);
    }
  });
}
